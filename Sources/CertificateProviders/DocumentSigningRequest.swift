import Foundation

/// What a server-side signer is asked to sign.
public struct DocumentSigningRequest: Sendable {
    /// The document itself, or only its digest for servers that sign hashes.
    public enum Payload: Sendable {
        case content([UInt8])
        case digest([UInt8], DigestAlgorithm)
    }

    /// The document or its digest.
    public var payload: Payload
    /// The container to build (default CAdES-BES).
    public var format: SignatureFormat
    /// Whether the signature leaves the content out (default true).
    public var isDetached: Bool
    /// The digest algorithm to use (default SHA-256).
    public var digestAlgorithm: DigestAlgorithm
    /// The document's file when the payload is its digest (default nil), so that a server which
    /// signs whole documents can be sent the content instead.
    public var contentFile: URL?

    /// Creates a request.
    public init(
        payload: Payload,
        format: SignatureFormat = .cadesBES,
        isDetached: Bool = true,
        digestAlgorithm: DigestAlgorithm = .sha256,
        contentFile: URL? = nil
    ) {
        self.payload = payload
        self.format = format
        self.isDetached = isDetached
        self.digestAlgorithm = digestAlgorithm
        self.contentFile = contentFile
    }
}
