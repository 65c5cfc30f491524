import CertificateProviders
import Foundation

/// CryptoPro DSS deployments that release a signature only after the user confirmed it in myDSS:
/// with `confirmation=required` every signature goes through a transaction
/// (``CryptoProDSSClient/createTransaction(document:certificateID:pin:parameters:)``) that
/// ``signDocument(_:)`` waits for, at most `approvalTimeout` seconds. A timed-out transaction stays
/// on the server: any provider of the same user, in this process or a later one, finishes it with
/// ``confirmedSignature(transactionID:)`` or ``waitForConfirmation(transactionID:timeout:)``.
extension CryptoProDSSProvider {
    /// How long ``signDocument(_:)`` waits for a confirmation when `approvalTimeout` is not set.
    public static let defaultApprovalTimeout = 300

    /// Signs through a transaction when the parameters ask for confirmation, else at once.
    func signOrConfirm(
        _ document: [UInt8],
        session: Session,
        pin: Secret?,
        parameters signature: CryptoProSignatureParameters
    ) async throws -> [UInt8] {
        guard try parameters.string(ParameterKey.confirmation) == "required" else {
            return try await session.client.sign(
                document: document,
                certificateID: session.certificateID,
                pin: pin,
                parameters: signature
            )
        }
        let id = try await session.client.createTransaction(
            document: document,
            certificateID: session.certificateID,
            pin: pin,
            parameters: signature
        )
        let timeout = try parameters.integer(ParameterKey.approvalTimeout) ?? Self.defaultApprovalTimeout
        return try await waitForConfirmation(transactionID: id, timeout: .seconds(timeout))
    }

    /// The signature of a transaction once the user confirmed it, or nil while it waits.
    /// - Throws: `.approvalDeclined`, `.approvalExpired` naming the transaction; as
    ///   ``CryptoProDSSClient/transactionSignature(_:)``.
    public func confirmedSignature(transactionID: String) async throws -> [UInt8]? {
        try await currentSession().client.transactionSignature(transactionID)
    }

    /// Waits until the user confirmed the transaction, polling every `pollInterval`.
    /// - Returns: the DER CMS the server made.
    /// - Throws: `.timeout` naming the transaction; as ``confirmedSignature(transactionID:)``.
    public func waitForConfirmation(
        transactionID: String,
        timeout: Duration,
        pollInterval: Duration = .seconds(1)
    ) async throws -> [UInt8] {
        try await ApprovalWait.until(
            operationID: transactionID,
            providerID: providerID,
            timeout: timeout,
            pollInterval: pollInterval
        ) { try await confirmedSignature(transactionID: transactionID) }
    }
}
