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

/// `sign --no-wait` and any later process: a transaction started without waiting, kept as a
/// `PendingRemoteSignature` (the transaction ID, the certificate ID as its key), and its CMS fetched
/// once the user confirmed it.
extension CryptoProDSSProvider: ApprovalDocumentSigning {
    /// What one signing call sends.
    struct DocumentUpload {
        let session: Session
        let document: [UInt8]
        let pin: Secret?
        let parameters: CryptoProSignatureParameters
    }

    /// Whether `confirmation=required`: signatures go through transactions the user confirms.
    public var waitsForApproval: Bool {
        (try? parameters.string(ParameterKey.confirmation)) == "required"
    }

    /// Creates a transaction for `request` and returns it at once.
    /// - Throws: `.invalidParameter` without `confirmation=required` (the server would sign at
    ///   once); as ``CryptoProDSSClient/createTransaction(document:certificateID:pin:parameters:)``.
    public func requestDocumentSignature(_ request: DocumentSigningRequest) async throws -> PendingRemoteSignature {
        guard waitsForApproval else {
            throw CertificateProviderError.invalidParameter(
                "CryptoPro DSS signs at once unless --param confirmation=required: there is no transaction to wait for"
            )
        }
        let upload = try await upload(request)
        let id = try await upload.session.client.createTransaction(
            document: upload.document,
            certificateID: upload.session.certificateID,
            pin: upload.pin,
            parameters: upload.parameters
        )
        let digest: [UInt8]
        switch request.payload {
        case .content(let bytes): digest = request.digestAlgorithm.hash(bytes)
        case .digest(let bytes, _): digest = bytes
        }
        return PendingRemoteSignature(
            providerID: providerID,
            operationID: id,
            keyID: String(upload.session.certificateID),
            digests: [digest],
            digestAlgorithm: request.digestAlgorithm,
            scheme: SignatureScheme.default(for: upload.session.identity.certificate.publicKeyAlgorithm),
            expiresAt: nil
        )
    }

    /// The server's CMS once the user confirmed `operation`, or nil while it waits.
    /// - Throws: `.invalidParameter` for another provider's operation or another certificate's;
    ///   as ``confirmedSignature(transactionID:)``.
    public func confirmedDocumentSignature(of operation: PendingRemoteSignature) async throws -> [UInt8]? {
        guard operation.providerID == providerID else {
            throw CertificateProviderError.invalidParameter(
                "operation \(operation.operationID) belongs to provider '\(operation.providerID)', not '\(providerID)'"
            )
        }
        let session = try await currentSession()
        guard operation.keyID == String(session.certificateID) else {
            throw CertificateProviderError.invalidParameter(
                "transaction \(operation.operationID) signs with CryptoPro DSS certificate \(operation.keyID), not "
                    + "\(session.certificateID): resume it with --param certificateID=\(operation.keyID)"
            )
        }
        return try await session.client.transactionSignature(operation.operationID)
    }
}
