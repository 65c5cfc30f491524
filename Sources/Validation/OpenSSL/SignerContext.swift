import CMS
internal import COpenSSL
import CertificateProviders
import Foundation

/// What the per-signer pipeline of ``SignedDataVerifier`` hands to the checks of one signer
/// (``SignatureTimestampCheck``, ``PathRevocationCheck``, ``ArchiveTimestampCheck``). Everything in
/// it is borrowed for the duration of the synchronous call.
package struct SignerContext {
    /// The `CMS_SignerInfo*` being checked (owned by the ContentInfo; do not free). Its signature
    /// value is `CMS_SignerInfo_get0_signature`; its unsigned attributes hold the
    /// id-aa-signatureTimeStampToken (`NID_id_smime_aa_timeStampToken`).
    package let signerInfo: OpaquePointer
    /// The signer's certificate (already matched to the SignerInfo, ESS-checked).
    package let signer: Certificate
    /// The position of this SignerInfo in the signature (0-based).
    package let index: Int
    /// Every certificate the signature carries.
    package let certificates: [Certificate]
    /// The trust anchors of the signer's chain (may be empty: `--no-chain-check`).
    package let trustAnchors: [Certificate]
    /// The trust anchors for time-stamping authorities: `policy.timestampTrustAnchors`, else
    /// ``trustAnchors``.
    package let timestampTrustAnchors: [Certificate]
    /// The caller's policy (`checkRevocation`, `crls`, `algorithms`, …).
    package let policy: ValidationPolicy
    /// The policy's validation time, read once for the whole signature.
    package let validationTime: Date
}
