public import CertificateProviders
public import Foundation

/// What to sign: bytes in memory or a file on disk (streamed, never loaded for detached signatures).
public struct Document: Sendable, CustomStringConvertible {
    /// Where the document's bytes are.
    public enum Source: Sendable {
        /// Bytes in memory.
        case bytes([UInt8])
        /// A file, read in chunks.
        case file(URL)
    }

    /// The bytes or the file.
    public var source: Source
    /// The name recorded in the journal (any Unicode; defaults to the file name).
    public var name: String

    /// Creates a document from bytes.
    public static func bytes(_ bytes: [UInt8], name: String) -> Document { Document(source: .bytes(bytes), name: name) }

    /// Creates a document from a file; the name defaults to the file's last path component.
    public static func file(_ url: URL, name: String? = nil) -> Document {
        Document(source: .file(url), name: name ?? url.lastPathComponent)
    }

    /// A one-line summary for logs and command-line output.
    public var description: String {
        switch source {
        case .bytes(let bytes): return "Document(\(name), \(bytes.count) bytes)"
        case .file(let url): return "Document(\(name), file \(url.path))"
        }
    }
}

/// How the coordinator signs.
public struct SigningOptions: Sendable, Hashable {
    /// The container format. Default `.cadesBES`.
    public var format: SignatureFormat
    /// Whether the signature leaves the content out. Default true.
    public var isDetached: Bool
    /// The digest algorithm; nil (default) takes the one that fits the signer's key
    /// (`DigestAlgorithm.preferred(for:)`: Streebog-256/512 for GOST keys, SHA-256 otherwise).
    public var digestAlgorithm: DigestAlgorithm?
    /// The signing-time attribute; nil (default) means the moment of signing.
    public var signingTime: Date?
    /// Bytes per read when streaming a file. Default 1 MiB.
    public var chunkSize: Int

    /// Creates options; every parameter has the documented default.
    public init(
        format: SignatureFormat = .cadesBES,
        isDetached: Bool = true,
        digestAlgorithm: DigestAlgorithm? = nil,
        signingTime: Date? = nil,
        chunkSize: Int = CMSSigner.defaultChunkSize
    ) {
        self.format = format
        self.isDetached = isDetached
        self.digestAlgorithm = digestAlgorithm
        self.signingTime = signingTime
        self.chunkSize = chunkSize
    }
}

/// What ``SigningCoordinator/sign(document:provider:parameters:options:output:progress:)`` made.
public struct SigningResult: Sendable {
    /// The journal record (its ID is the signature's ID).
    public let record: SignatureRecord
    /// The DER CMS signature.
    public let signature: [UInt8]
    /// The `.p7s` file written, when an output was given.
    public let outputURL: URL?
    /// The certificate that signed.
    public let signerCertificate: Certificate
}

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

/// The merged list of signatures.
public struct SignatureList: Sendable {
    /// Every entry, newest first (entries without a time last).
    public let entries: [SignatureEntry]
    /// Providers whose server history could not be read, with the reason; their entries are missing.
    public let unavailable: [ProviderID: CertificateProviderError]
}
