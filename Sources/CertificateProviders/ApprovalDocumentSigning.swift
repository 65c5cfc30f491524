/// A ``DocumentSigning`` provider whose server may ask a person before it releases the signature it
/// builds (CryptoPro DSS with confirmation in myDSS): it can start the operation and return at once
/// with a ``PendingRemoteSignature``, and hand out the finished CMS later, in this process or any
/// later one.
///
/// Contract: ``requestDocumentSignature(_:)`` never waits for the person;
/// ``confirmedDocumentSignature(of:)`` never waits either, returns nil while the operation waits and
/// the server's DER CMS once it was approved (the caller checks it against what it prepared before
/// writing anything), and throws `.approvalDeclined` or `.approvalExpired` (reasons naming the
/// operation ID) once the person declined or the server forgot the operation.
public protocol ApprovalDocumentSigning: DocumentSigning {
    /// Whether the server is configured to wait for a person: when false, ``DocumentSigning/signDocument(_:)``
    /// returns at once and callers sign the ordinary way.
    var waitsForApproval: Bool { get }

    /// Starts an operation signing `request` and returns it without waiting for the approval.
    /// - Returns: the operation; its ``PendingRemoteSignature/digests`` hold the document's digest.
    /// - Throws: the provider's errors (wrong PIN, refused authorization, network).
    func requestDocumentSignature(_ request: DocumentSigningRequest) async throws -> PendingRemoteSignature

    /// The CMS of `operation` once approved, or nil while it waits; never waits.
    /// - Throws: `.approvalDeclined`, `.approvalExpired`; `.invalidParameter` when the operation
    ///   belongs to another provider or key; the provider's errors.
    func confirmedDocumentSignature(of operation: PendingRemoteSignature) async throws -> [UInt8]?
}
