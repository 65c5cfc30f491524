import Foundation

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
