public import CertificateProviders
import Foundation

/// The verification part of ``SigningCoordinator``.
extension SigningCoordinator {
    // MARK: Verification

    /// Verifies a CMS / CAdES signature, every signer of it, under a policy.
    ///
    /// - Parameters:
    ///   - signature: DER, BER or PEM.
    ///   - content: the signed document (required for detached signatures; files are streamed; for
    ///     an attached signature it must equal the embedded content).
    ///   - trust: trust anchors; empty checks only the signature, and the result says so.
    ///   - policy: validation time, algorithms, key usage, revocation (default strict, offline).
    /// - Throws: `.fileSystem` when a content file cannot be read.
    public func verify(
        signature: [UInt8],
        content: Document?,
        trust: [Certificate],
        policy: ValidationPolicy = ValidationPolicy()
    ) throws -> VerificationResult {
        switch content?.source {
        case .none: return CMSVerifier.verify(signature: signature, content: nil, trustAnchors: trust, policy: policy)
        case .bytes(let bytes)?:
            return CMSVerifier.verify(signature: signature, content: bytes, trustAnchors: trust, policy: policy)
        case .file(let url)?:
            return try CMSVerifier.verify(signature: signature, contentFileAt: url, trustAnchors: trust, policy: policy)
        }
    }
}
