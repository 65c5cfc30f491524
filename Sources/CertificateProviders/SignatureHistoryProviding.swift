import Foundation

/// A capability of providers whose server keeps a history of signatures (FMP DSS).
public protocol SignatureHistoryProviding: CertificateProvider {
    /// The signatures the server holds for the current user.
    func signatures() async throws -> [RemoteSignatureRecord]
    /// Removes one signature from the server's history.
    /// - Throws: `.notStored` when the server has no signature with that ID.
    func removeSignature(id: String) async throws
}
