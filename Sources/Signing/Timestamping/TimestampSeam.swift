import CertificateProviders
import Foundation

/// The signature-timestamp seam's work (called from `SignedDataVerifier.signatureTimestamp`).
enum TimestampSeam {
    /// The checked signature timestamp of the SignerInfo in `context`, or nil when it has none.
    ///
    /// With several tokens, the first valid one counts (its time is the earliest proof the
    /// pipeline may use); when none is valid the first token's failure is reported.
    static func timestamp(for context: SignerContext) -> VerifiedTimestamp? {
        let tokens = CMSTimestamping.tokens(of: context.signerInfo)
        guard !tokens.isEmpty else { return nil }
        let value = CMSTimestamping.signatureValue(of: context.signerInfo)
        guard !context.timestampTrustAnchors.isEmpty else {
            let facts = TimestampOpenSSL.facts(ofToken: tokens[0])
            return VerifiedTimestamp(
                time: facts?.time ?? .distantPast,
                tsa: facts?.authorityCertificate,
                failure: VerificationFailure(
                    .timestampInvalid,
                    "no trust anchors were given for its time-stamping authority (--tsa-ca, or --ca)"
                )
            )
        }
        var first: VerifiedTimestamp?
        for token in tokens {
            let check = TimestampOpenSSL.verifyToken(
                token,
                data: value,
                trustAnchors: context.timestampTrustAnchors,
                at: context.validationTime,
                skew: 300
            )
            let verified = VerifiedTimestamp(
                time: check.token?.time ?? .distantPast,
                tsa: check.token?.authorityCertificate,
                failure: check.failureReason.map { VerificationFailure(.timestampInvalid, $0) }
            )
            if verified.isValid { return verified }
            if first == nil { first = verified }
        }
        return first
    }
}
