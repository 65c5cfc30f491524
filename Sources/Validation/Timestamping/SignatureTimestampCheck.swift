import CMS
import CertificateProviders
import Foundation

/// The signer's signature timestamp (RFC 3161, CAdES-T), checked: its message imprint is the hash of
/// this SignerInfo's signature value, the TSA certificate has the (critical) timeStamping extended key
/// usage, and the TSA chain leads to `context.timestampTrustAnchors` (at the token's genTime, or at
/// `context.validationTime`). Without TSA trust anchors the token cannot be trusted and comes back
/// with a failure, unless no chain is checked at all (no anchors for the signer either): then the
/// token is checked but for its chain (``TimestampAnchors``).
///
/// The per-signer pipeline of ``SignedDataVerifier`` does the rest: an invalid token fails the signer
/// with `.timestampInvalid`; a valid token's time that lies inside the signer certificate's validity
/// (and not after the validation time) becomes the time the certificate, chain and revocation are
/// checked at. Synchronous and OpenSSL-only (no network): it runs inside the verifier's single pass
/// over the error queue.
package enum SignatureTimestampCheck {
    /// The checked signature timestamp of the SignerInfo in `context`, or nil when it has none.
    ///
    /// With several tokens, the first valid one counts (its time is the earliest proof the
    /// pipeline may use); when none is valid the first token's failure is reported.
    package static func timestamp(for context: SignerContext) -> VerifiedTimestamp? {
        let tokens = CMSTimestamping.tokens(of: context.signerInfo)
        guard !tokens.isEmpty else { return nil }
        let value = CMSTimestamping.signatureValue(of: context.signerInfo)
        // Anchors for the signer but none for its TSA: the token cannot be trusted. None at all: no
        // chain is checked, the TSA's no more than the signer's.
        let checksChains = !context.trustAnchors.isEmpty || context.policy.timestampTrustAnchors != nil
        guard !context.timestampTrustAnchors.isEmpty || !checksChains else {
            let facts = TimestampOpenSSL.facts(ofToken: tokens[0])
            return VerifiedTimestamp(
                time: facts?.time ?? .distantPast,
                tsa: facts?.authorityCertificate,
                failure: VerificationFailure(
                    .timestampInvalid,
                    "no trust anchors were given for its time-stamping authority (--tsa-ca, or --ca)",
                    timestampKind: .untrustedAuthority
                )
            )
        }
        var first: VerifiedTimestamp?
        for token in tokens {
            let anchors = TimestampAnchors.anchors(context.timestampTrustAnchors, token: token)
            let check = TimestampOpenSSL.verifyToken(
                token,
                data: value,
                trustAnchors: anchors,
                at: context.validationTime,
                skew: 300
            )
            let expired =
                check.failureReason != nil && onlyExpired(token, value, anchors, check, context.validationTime)
            let code: VerificationFailure.Code = expired ? .timestampExpired : .timestampInvalid
            let verified = VerifiedTimestamp(
                time: check.token?.time ?? .distantPast,
                tsa: check.token?.authorityCertificate,
                failure: check.failureReason.map { VerificationFailure(code, $0, timestampKind: check.failureKind) }
            )
            if verified.isValid { return verified }
            if first == nil { first = verified }
        }
        return first
    }

    /// Whether the token fails only because its TSA's path is out of its validity at the validation
    /// time: its time is not after the validation time, and it verifies at its own time.
    private static func onlyExpired(
        _ token: [UInt8],
        _ value: [UInt8],
        _ anchors: [Certificate],
        _ check: TimestampCheck,
        _ validationTime: Date
    ) -> Bool {
        guard let time = check.token?.time, time <= validationTime else { return false }
        return TimestampOpenSSL.verifyToken(token, data: value, trustAnchors: anchors, at: time, skew: 300).isValid
    }
}
