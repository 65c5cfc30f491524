public import CertificateProviders
public import Foundation
import HTTPClient
import JSON
import RemoteProviderSupport

/// CryptoPro DSS signing that waits for the user's confirmation in myDSS: a transaction is created
/// with the body of `…/documents` (`POST …/rest/api/transactions`), and its state read until the
/// user confirmed it (`GET …/rest/api/transactions/{id}`: `State` `Pending`, `Confirmed` with the
/// `Signature`, `Declined`, `Expired`).
extension CryptoProDSSClient {
    /// `…/rest/api/transactions`, beside `…/rest/api/documents`.
    public var transactionsURL: URL {
        configuration.documentsURL.deletingLastPathComponent().appendingPathComponent("transactions")
    }

    /// Creates a transaction signing `document` once the user confirms it.
    /// - Returns: the transaction's ID.
    /// - Throws: as ``sign(document:certificateID:pin:parameters:)``; `.network` when the answer is not
    ///   a non-empty JSON string.
    public func createTransaction(
        document: [UInt8],
        certificateID: Int,
        pin: Secret?,
        parameters: CryptoProSignatureParameters = CryptoProSignatureParameters()
    ) async throws -> String {
        let request = try signRequest(transactionsURL, document, certificateID, pin, parameters)
        let response = try await sendAuthorized(request, name: "transaction")
        guard let id = try response.json(context: "CryptoPro DSS transaction").stringValue, !id.isEmpty else {
            throw CertificateProviderError(.network, "CryptoPro DSS transaction: the answer is not a transaction ID")
        }
        return id
    }

    /// Reads a transaction's state once.
    /// - Returns: nil while the user has not confirmed it, the DER CMS once confirmed.
    /// - Throws: `.approvalDeclined` or `.approvalExpired` naming the transaction; `.serverRejected`
    ///   for a transaction the user does not have; `.network` for an answer of another shape.
    public func transactionSignature(_ id: String) async throws -> [UInt8]? {
        guard let escaped = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed), !id.contains("/") else {
            throw CertificateProviderError.invalidParameter("'\(id)' is not a CryptoPro DSS transaction ID")
        }
        let request = try makeRequest(.get, transactionsURL.appendingPathComponent(escaped))
        let response = try await sendAuthorized(request, name: "transaction \(id)")
        let json = try response.json(context: "CryptoPro DSS transaction \(id)")
        let reader = try JSONObjectReader(json, context: "CryptoPro DSS transaction \(id)", errorCode: .network)
        switch try reader.string("State") {
        case "Pending": return nil
        case "Confirmed":
            guard let signature = json["Signature"] else {
                throw CertificateProviderError(
                    .network,
                    "CryptoPro DSS transaction \(id): confirmed without a Signature"
                )
            }
            return try CryptoProDSSClient.decodeSignature(signature)
        case "Declined":
            throw CertificateProviderError(
                .approvalDeclined,
                "CryptoPro DSS transaction \(id) was declined by the user: nothing was signed"
            )
        case "Expired":
            throw CertificateProviderError(
                .approvalExpired,
                "CryptoPro DSS transaction \(id) expired before the user confirmed it: nothing was signed; sign again"
            )
        case let state:
            throw CertificateProviderError(.network, "CryptoPro DSS transaction \(id): unknown State '\(state)'")
        }
    }
}
