import CMS
import CertificateProviders
import Foundation

extension VerificationResult {
    /// A copy of this result whose signers are `signers`, for a trust source that judges each
    /// verified chain after ``CMSVerifier`` (an EU trusted list's service is trusted or not at the
    /// time each chain was checked at). When this result has no failure of its own, the copy takes
    /// the first failing signer's; everything else is kept.
    /// - Parameter signers: one per signer of this result, in its order.
    public func replacingSigners(_ signers: [SignerVerification]) -> VerificationResult {
        var copy = VerificationResult(
            failure: failure ?? signers.first { $0.failure != nil }?.failure,
            signerCertificate: signerCertificate,
            signingTime: signingTime,
            digestAlgorithm: digestAlgorithm,
            format: format,
            isDetached: isDetached,
            chainChecked: chainChecked,
            chain: chain,
            embeddedContent: embeddedContent,
            signers: signers,
            validationTime: validationTime
        )
        copy.pastValidationTime = pastValidationTime
        return copy
    }
}

extension SignerVerification {
    /// A copy of this signer's result with `failure` (the rest kept), for a trust source that judges
    /// the verified chain afterwards.
    public func replacingFailure(_ failure: VerificationFailure?) -> SignerVerification {
        SignerVerification(
            failure: failure,
            signerCertificate: signerCertificate,
            signingTime: signingTime,
            digestAlgorithm: digestAlgorithm,
            digestAlgorithmName: digestAlgorithmName,
            signatureAlgorithmName: signatureAlgorithmName,
            format: format,
            chainChecked: chainChecked,
            chain: chain,
            checkedAt: checkedAt,
            timestamp: timestamp,
            revocation: revocation,
            signatureValue: signatureValue
        )
    }
}
