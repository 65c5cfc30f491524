import CMS
import CertificateProviders
import Foundation

extension CMSVerifier {
    /// Verifies a detached signature whose content is not at hand, only its digest: each signer's
    /// messageDigest attribute must be `contentDigest`, and everything else is checked as
    /// ``verify(signature:content:trustAnchors:policy:)`` checks it. An attached signature is
    /// verified over the content it embeds, as there.
    ///
    /// What is proven is that the signer signed *a* content with that digest: the caller must know
    /// the digest belongs to the document (a prepared PDF update, a pending signature's digest) and
    /// must compare the signer's digest algorithm with the one the digest was made with.
    /// - Parameters:
    ///   - signature: DER, BER or PEM CMS ContentInfo.
    ///   - contentDigest: the content's digest with the signer's digest algorithm.
    ///   - trustAnchors: as in ``verify(signature:content:trustAnchors:policy:)``.
    ///   - policy: as in ``verify(signature:content:trustAnchors:policy:)``.
    /// - Returns: the result with every signer.
    package static func verify(
        signature: [UInt8],
        contentDigest: [UInt8],
        trustAnchors: [Certificate],
        policy: ValidationPolicy = ValidationPolicy()
    ) -> VerificationResult {
        SignedDataVerifier.verify(
            signature: signature,
            content: .digest(contentDigest),
            trustAnchors: trustAnchors,
            policy: policy
        )
    }
}
