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

/// A capability of providers whose server builds the whole signature (CryptoPro DSS returns a
/// finished CAdES): the coordinator sends the document instead of building the CMS locally.
public protocol DocumentSigning: CertificateProvider {
    /// Signs a document on the server.
    ///
    /// - Returns: the DER-encoded CMS SignedData (ContentInfo) the server produced.
    /// - Throws: `.serverRejected`, `.authenticationFailed`, `.network`, `.timeout`,
    ///   `.unsupportedAlgorithm` (format or digest the server cannot make).
    func signDocument(_ request: DocumentSigningRequest) async throws -> [UInt8]
}

/// One signature kept in a server's history.
public struct RemoteSignatureRecord: Sendable, Equatable {
    /// The server's ID for the signature.
    public var id: String
    /// When the server made it, if it says.
    public var createdAt: Date?
    /// The server's ID of the certificate that signed.
    public var certificateID: String?
    /// What was signed, in the server's words (for FMP: resource / table / column / row).
    public var summary: String
    /// The signature (DER CMS), when the server returns it.
    public var signature: [UInt8]?

    /// Creates a record.
    public init(
        id: String,
        createdAt: Date? = nil,
        certificateID: String? = nil,
        summary: String,
        signature: [UInt8]? = nil
    ) {
        self.id = id
        self.createdAt = createdAt
        self.certificateID = certificateID
        self.summary = summary
        self.signature = signature
    }
}

/// A capability of providers whose server keeps a history of signatures (FMP DSS).
public protocol SignatureHistoryProviding: CertificateProvider {
    /// The signatures the server holds for the current user.
    func signatures() async throws -> [RemoteSignatureRecord]
    /// Removes one signature from the server's history.
    /// - Throws: `.notStored` when the server has no signature with that ID.
    func removeSignature(id: String) async throws
}
