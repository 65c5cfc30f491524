public import CertificateProviders
public import Foundation
public import SignatureJournal

/// One signature in the merged list: from the local journal or from a provider's server history.
public struct SignatureEntry: Sendable, Identifiable, CustomStringConvertible {
    /// Where a signature lives.
    public enum Location: Sendable, Hashable, CustomStringConvertible {
        /// The local signature journal.
        case journal
        /// The server history of a provider (`SignatureHistoryProviding`).
        case server(ProviderID)

        /// A one-line summary for logs and command-line output.
        public var description: String {
            switch self {
            case .journal: return "journal"
            case .server(let id): return "server:\(id)"
            }
        }
    }

    /// The ID within its location.
    public let id: String
    /// Where it lives; pass it back to ``SigningCoordinator/removeSignature(id:location:)``.
    public let location: Location
    /// The provider that signed (for server entries, the server's provider).
    public let providerID: ProviderID
    /// When it was made, if known.
    public let createdAt: Date?
    /// A one-line description (document name, or the server's summary).
    public let summary: String
    /// The journal record, for journal entries.
    public let record: SignatureRecord?
    /// The server record, for server entries.
    public let remoteRecord: RemoteSignatureRecord?

    /// A one-line summary for logs and command-line output.
    public var description: String { "[\(location)] \(id) \(summary)" }
}
