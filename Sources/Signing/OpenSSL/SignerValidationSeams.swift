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

    /// SEAM (part C, revocation): the revocation status of the signer's certificate.
    ///
    /// Called only when `context.policy.wantsRevocation` (`checkRevocation`, or `crls` given).
    /// `chain` is the verified chain, signer first and trust anchor last (just the signer when no
    /// trust anchors were given). `provenTime` is the time a valid trusted signature timestamp
    /// proves, when there is one. Return `.good`, `.revoked` with its `revocationTime`, or
    /// `.unknown` (no usable answer) and say in `source` where the answer came from.
    ///
    /// The pipeline maps the answer: `.revoked` fails the signer with `.signerRevoked` unless
    /// `provenTime` precedes the revocation time; `.unknown` fails it with `.revocationUnknown`.
    ///
    /// This function is synchronous, inside the verifier's OpenSSL pass: it can read
    /// `context.policy.crls` itself, but network answers (OCSP from the AIA, CRL distribution
    /// points) must be fetched *before* verification (an async caller runs a first pass to learn
    /// the chains, fetches over the transport, then verifies again with the answers) and handed
    /// in here, e.g. through a field added to ``SignerContext``. Until then it answers `.unknown`,
    /// so asking for revocation never yields a silent VALID.
    static func revocationStatus(chain: [Certificate], provenTime: Date?, context: SignerContext) -> RevocationStatus {
        RevocationSeam.status(
            chain: chain,
            certificates: context.certificates,
            policy: context.policy,
            validationTime: context.validationTime,
            provenTime: provenTime
        )
    }
}
