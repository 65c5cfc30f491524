public import CertificateProviders
public import Foundation

/// One signature the coordinator made, as kept in the ``SignatureJournal``.
public struct SignatureRecord: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// Where the signature bytes are.
    public enum Storage: Sendable, Hashable {
        /// In a file (the `.p7s` the coordinator wrote).
        case file(URL)
        /// In the journal itself.
        case inline([UInt8])
    }

    /// A unique ID (a UUID string).
    public var id: String
    /// When the signature was made.
    public var createdAt: Date
    /// The provider whose identity signed.
    public var providerID: ProviderID
    /// The signer certificate's subject (RFC 2253).
    public var signerSubject: String
    /// The signer certificate's SHA-256 fingerprint, colon-separated hex.
    public var signerFingerprint: String
    /// The document's name (file name or caller-given name; any Unicode).
    public var documentName: String
    /// The document's size in bytes.
    public var documentSize: Int64
    /// The document's digest with ``digestAlgorithm``.
    public var documentDigest: [UInt8]
    /// The digest algorithm of the signature (stored in the journal by its name, `DigestAlgorithm.rawValue`).
    public var digestAlgorithm: DigestAlgorithm
    /// The container format.
    public var format: SignatureFormat
    /// Whether the signature is detached.
    public var isDetached: Bool
    /// Where the signature bytes are.
    public var storage: Storage

    /// Creates a record.
    public init(
        id: String = UUID().uuidString,
        createdAt: Date = Date(),
        providerID: ProviderID,
        signerSubject: String,
        signerFingerprint: String,
        documentName: String,
        documentSize: Int64,
        documentDigest: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        format: SignatureFormat,
        isDetached: Bool,
        storage: Storage
    ) {
        self.id = id
        self.createdAt = createdAt
        self.providerID = providerID
        self.signerSubject = signerSubject
        self.signerFingerprint = signerFingerprint
        self.documentName = documentName
        self.documentSize = documentSize
        self.documentDigest = documentDigest
        self.digestAlgorithm = digestAlgorithm
        self.format = format
        self.isDetached = isDetached
        self.storage = storage
    }

    /// A one-line summary for logs and command-line output.
    public var description: String {
        "SignatureRecord(\(id), \(documentName), \(format)\(isDetached ? " detached" : ""), signer: \(signerSubject))"
    }
}
