import CertificateProviders
import Foundation
import Signing

/// How a provider's signature waits for a person: its key signs the prepared digest once approved
/// (an `ApprovalSigningKey`: CSC asynchronous mode), or its server builds the whole CMS once the user
/// confirmed it (an `ApprovalDocumentSigning` provider: CryptoPro DSS with `confirmation=required`).
/// Either way the answer completes the document's pending signature, checked before anything is
/// written: a value against the prepared digest, a CMS against the prepared certificate and digest.
enum ApprovalRoute {
    case key(any ApprovalSigningKey)
    case server(any ApprovalDocumentSigning)

    /// The route of a provider and its identity, or nil when neither waits for a person
    /// (`requiringWait`: as configured now; else whether it can answer about an operation at all,
    /// as `pending resume` needs).
    static func of(
        _ provider: (any CertificateProvider)?,
        identity: SigningIdentity,
        requiringWait: Bool = true
    ) -> ApprovalRoute? {
        if let key = identity.key as? any ApprovalSigningKey, key.waitsForApproval || !requiringWait {
            return .key(key)
        }
        if let server = provider as? any ApprovalDocumentSigning, server.waitsForApproval || !requiringWait {
            return .server(server)
        }
        return nil
    }

    /// Starts the operation that signs `pending` (prepared for the document at `document`).
    /// - Throws: the provider's errors.
    func start(_ pending: PendingSignature, document: URL) async throws -> PendingRemoteSignature {
        switch self {
        case .key(let key):
            return try await key.requestSignatures(
                forDigests: [pending.digestToSign],
                digestAlgorithm: pending.digestAlgorithm,
                scheme: pending.scheme
            )
        case .server(let server):
            var request = DocumentSigningRequest(
                payload: .digest(pending.contentDigest, pending.digestAlgorithm),
                format: pending.format,
                isDetached: pending.detached,
                digestAlgorithm: pending.digestAlgorithm
            )
            request.contentFile = document
            return try await server.requestDocumentSignature(request)
        }
    }

    /// The answer of `operation` once approved, or nil while it waits; never waits.
    /// - Throws: `.approvalDeclined`, `.approvalExpired`; the provider's errors.
    func answer(of operation: PendingRemoteSignature) async throws -> PendingSignatureAnswer? {
        switch self {
        case .key(let key):
            guard case .signed(let values) = try await key.status(of: operation), let value = values.first else {
                return nil
            }
            return .signatureValue(value)
        case .server(let server):
            return try await server.confirmedDocumentSignature(of: operation).map(PendingSignatureAnswer.cms)
        }
    }

    /// Asks about `operation` until it is approved, declined, expired, or `timeout` passed.
    /// - Throws: `.timeout` naming the operation; as ``answer(of:)``.
    func waitForAnswer(
        _ operation: PendingRemoteSignature,
        timeout: Duration,
        progress: @escaping @Sendable (Duration) -> Void
    ) async throws -> PendingSignatureAnswer {
        try await ApprovalWait.until(
            operationID: operation.operationID,
            providerID: operation.providerID,
            timeout: timeout,
            progress: progress
        ) { try await answer(of: operation) }
    }
}
