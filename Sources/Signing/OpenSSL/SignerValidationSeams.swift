internal import COpenSSL
import CertificateProviders
import Foundation

/// What the per-signer pipeline of ``SignedDataVerifier`` hands to the timestamp and revocation
/// seams below. Everything in it is borrowed for the duration of the synchronous call.
struct SignerContext {
    /// The `CMS_SignerInfo*` being checked (owned by the ContentInfo; do not free). Its signature
    /// value is `CMS_SignerInfo_get0_signature`; its unsigned attributes hold the
    /// id-aa-signatureTimeStampToken (`NID_id_smime_aa_timeStampToken`).
    let signerInfo: OpaquePointer
    /// The signer's certificate (already matched to the SignerInfo, ESS-checked).
    let signer: Certificate
    /// The position of this SignerInfo in the signature (0-based).
    let index: Int
    /// Every certificate the signature carries.
    let certificates: [Certificate]
    /// The trust anchors of the signer's chain (may be empty: `--no-chain-check`).
    let trustAnchors: [Certificate]
    /// The trust anchors for time-stamping authorities: `policy.timestampTrustAnchors`, else
    /// ``trustAnchors``.
    let timestampTrustAnchors: [Certificate]
    /// The caller's policy (`checkRevocation`, `crls`, `algorithms`, …).
    let policy: ValidationPolicy
    /// The policy's validation time, read once for the whole signature.
    let validationTime: Date
}

extension SignedDataVerifier {
    /// SEAM (part B, RFC 3161 / CAdES-T): the signer's signature timestamp, checked.
    ///
    /// Return nil when the SignerInfo has no id-aa-signatureTimeStampToken unsigned attribute.
    /// Otherwise return a ``VerifiedTimestamp`` whose `failure` is nil only when the token verifies:
    /// its message imprint is the hash of *this* SignerInfo's signature value, the TSA certificate
    /// has the (critical) timeStamping extended key usage, and the TSA chain leads to
    /// `context.timestampTrustAnchors` (at the token's genTime, or at `context.validationTime`).
    /// When `timestampTrustAnchors` is empty the token cannot be trusted: return it with a failure.
    ///
    /// The pipeline then does the rest and part B need not touch it: an invalid token fails the
    /// signer with `.timestampInvalid`; a valid token's `time` that lies inside the signer
    /// certificate's validity (and not after the validation time) becomes the time the signer's
    /// certificate, chain and revocation are checked at; otherwise the validation time is used.
    ///
    /// Keep it synchronous and OpenSSL-only (no network): it runs inside the verifier's single pass
    /// over the error queue. Drain OpenSSL errors into the failure's `openSSLErrors`.
    static func signatureTimestamp(for context: SignerContext) -> VerifiedTimestamp? {
        TimestampSeam.timestamp(for: context)
    }

    /// SEAM (revocation): the revocation status of every certificate of the signer's path and of
    /// its time-stamping authority's path, trust anchors excepted, and what it means for the signer.
    ///
    /// Called only when `context.policy.wantsRevocation` (`checkRevocation`, or `crls` given).
    /// `chain` is the verified chain, signer first and trust anchor last, when `chainChecked`
    /// (just the signer otherwise: its issuers are then looked for among the signature's
    /// certificates). `timestamp` is the signer's checked signature timestamp; `provenTime` the
    /// time a valid trusted one proves. The returned status is the summary (``RevocationStatus/
    /// certificates`` holds each certificate's); the failure, when there is one, fails the signer:
    /// `.signerRevoked` (a certificate of the signer's path revoked before `provenTime`),
    /// `.timestampInvalid` (a certificate of the TSA's path revoked), `.revocationUnknown`.
    ///
    /// Synchronous, inside the verifier's OpenSSL pass: network answers are fetched before
    /// verification by the asynchronous `CMSVerifier.verify(…, fetcher:)` and handed in through
    /// the policy.
    static func revocationVerdict(
        chain: [Certificate],
        chainChecked: Bool,
        timestamp: VerifiedTimestamp?,
        provenTime: Date?,
        context: SignerContext
    ) -> RevocationSeam.Verdict {
        RevocationSeam.verdict(
            chain: chain,
            chainChecked: chainChecked,
            timestamp: timestamp,
            provenTime: provenTime,
            context: context
        )
    }
}
