public import CertificateProviders
import Foundation
import RemoteProviderSupport

/// How a CSC key signs when the service waits for the user's approval (`operationMode` `A`): the
/// provider parameters `operationMode=asynchronous`, `validityPeriod` and `approvalTimeout` make it.
public struct CSCAsynchronousMode: Sendable, Equatable {
    /// How long the service keeps the operation for the user to approve (`validity_period`; default 600 s).
    public var validityPeriod: Int
    /// How long an ordinary signing call waits for the approval before it fails with `.timeout`
    /// (default 300 s); the operation stays on the service and can still be resumed.
    public var approvalTimeout: Int
    /// Seconds between two `signatures/signPolling` calls (default 1).
    public var pollInterval: Int

    /// Creates a mode.
    public init(validityPeriod: Int = 600, approvalTimeout: Int = 300, pollInterval: Int = 1) {
        self.validityPeriod = validityPeriod
        self.approvalTimeout = approvalTimeout
        self.pollInterval = pollInterval
    }
}

/// The CSC asynchronous operation as an ``CertificateProviders/ApprovalSigningKey``: one
/// `credentials/authorize` and one `signHash` with `operationMode` `A` start it; `signPolling` asks
/// about it. When the service answers the authorization with a handle (the user approves it on their
/// device), the operation is that authorization (its ID ``authorizationOperationPrefix`` + the
/// handle): `credentials/authorizeCheck` asks about it, and once approved a synchronous `signHash`
/// makes the values. Any ``CSCSigningKey`` of the same credential (another process, after a
/// restart) can ask about an operation another one started: the service knows it by its
/// `responseID` or handle.
extension CSCSigningKey: ApprovalSigningKey {
    /// Whether the provider was configured with `operationMode=asynchronous`.
    public var waitsForApproval: Bool { asynchronous != nil }

    /// Authorizes the batch and starts an asynchronous `signHash`, without waiting for the approval.
    /// - Throws: as ``signatures(forDigests:digestAlgorithm:scheme:)`` before it signs.
    public func requestSignatures(
        forDigests digests: [[UInt8]],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> PendingRemoteSignature {
        let validity = asynchronous?.validityPeriod ?? CSCAsynchronousMode().validityPeriod
        let (started, signAlgorithm) = try await authorize(digests, digestAlgorithm: digestAlgorithm, scheme: scheme)
        let sad: Secret
        switch started {
        case .authorized(let authorization): sad = authorization.sad
        case .pending(let handle):
            return PendingRemoteSignature(
                providerID: .csc,
                operationID: CSCSigningKey.authorizationOperationPrefix + handle,
                keyID: credentialID,
                digests: digests,
                digestAlgorithm: digestAlgorithm,
                scheme: scheme,
                expiresAt: Date().addingTimeInterval(TimeInterval(validity))
            )
        }
        let responseID = try await client.signHashAsynchronously(
            credentialID: credentialID,
            sad: sad,
            hashes: digests,
            hashAlgorithm: digestAlgorithm,
            signAlgorithm: signAlgorithm,
            validity: TimeInterval(validity)
        )
        return PendingRemoteSignature(
            providerID: .csc,
            operationID: responseID,
            keyID: credentialID,
            digests: digests,
            digestAlgorithm: digestAlgorithm,
            scheme: scheme,
            expiresAt: Date().addingTimeInterval(TimeInterval(validity))
        )
    }

    /// Polls the operation once (`signatures/signPolling`); approved values are checked against the
    /// credential's certificate.
    /// - Throws: `.invalidParameter` for an operation of another provider or credential;
    ///   `.approvalDeclined`, `.approvalExpired` naming the operation; `.invalidServerSignature`;
    ///   the client's errors.
    public func status(of operation: PendingRemoteSignature) async throws -> RemoteSignatureStatus {
        guard operation.providerID == .csc, operation.keyID == credentialID else {
            throw CertificateProviderError.invalidParameter(
                "operation \(operation.operationID) belongs to \(operation.providerID) key \(operation.keyID), not to "
                    + "CSC credential \(credentialID)"
            )
        }
        let digests = operation.digests.map { Array($0) }
        if operation.operationID.hasPrefix(CSCSigningKey.authorizationOperationPrefix) {
            return try await statusOfAuthorization(operation, digests: digests)
        }
        let result: CSCClient.PollResult
        do {
            result = try await client.signPolling(responseID: operation.operationID, count: digests.count)
        } catch let error as CertificateProviderError where error.code == .approvalDeclined {
            throw CertificateProviderError(
                .approvalDeclined,
                "CSC operation \(operation.operationID) was declined: nothing was signed (\(error.reason))"
            )
        } catch let error as CertificateProviderError where error.code == .approvalExpired {
            throw CertificateProviderError(
                .approvalExpired,
                "CSC operation \(operation.operationID) expired before it was approved: nothing was signed; sign "
                    + "again (\(error.reason))"
            )
        }
        guard case .signed(let signatures) = result else { return .waiting }
        try certificate.verifyServerSignatures(
            signatures,
            forDigests: digests,
            digestAlgorithm: try operation.digestAlgorithm(),
            scheme: operation.signatureScheme,
            service: "CSC credential \(credentialID): signatures/signPolling of \(operation.operationID)"
        )
        return .signed(signatures)
    }

    /// The prefix of the operation ID of a signature whose credential authorization waits for the
    /// user: the rest is the authorization's handle (the ID the user approves).
    public static let authorizationOperationPrefix = "authorization:"

    /// Asks about the authorization of `operation` once (`credentials/authorizeCheck`); once the SAD
    /// comes, signs at once (`signHash`, the user already approved) and checks the values.
    private func statusOfAuthorization(
        _ operation: PendingRemoteSignature,
        digests: [[UInt8]]
    ) async throws -> RemoteSignatureStatus {
        let handle = String(operation.operationID.dropFirst(CSCSigningKey.authorizationOperationPrefix.count))
        guard case .authorized(let authorization) = try await client.authorizeCheck(handle: handle) else {
            return .waiting
        }
        let digestAlgorithm = try operation.digestAlgorithm()
        let signAlgorithm = try CSCAlgorithms.signAlgorithm(
            keyAlgorithms: credential.keyAlgorithms,
            publicKeyAlgorithm: publicKeyAlgorithm,
            digest: digestAlgorithm,
            scheme: operation.signatureScheme
        )
        return .signed(
            try await signHash(
                digests,
                sad: authorization.sad,
                digestAlgorithm: digestAlgorithm,
                scheme: operation.signatureScheme,
                signAlgorithm: signAlgorithm
            )
        )
    }
}
