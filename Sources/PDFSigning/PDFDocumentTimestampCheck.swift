import CertificateProviders
import Foundation
import Signing

/// PAdES document timestamps (ETSI EN 319 142-1 5.4, ISO 32000-2 12.8.5): a signature value with
/// `/Type /DocTimeStamp` and `/SubFilter /ETSI.RFC3161` whose `/Contents` is an RFC 3161
/// TimeStampToken over the bytes of its ByteRange.
///
/// The token's signature, the TSA certificate (critical timeStamping extended key usage) and its
/// chain are checked at the validation time against the policy's timestamp trust anchors, else the
/// signature trust anchors (as signature timestamps are; with neither, its chain is not checked, as
/// a signature's is not); the imprint must be the hash (the
/// token's algorithm) of the covered bytes, and genTime must not lie after the validation time.
enum PDFDocumentTimestampCheck {
    /// Whether a signature value is a document timestamp: `/Type /DocTimeStamp` or `/SubFilter
    /// /ETSI.RFC3161` (the SubFilter says what `/Contents` holds).
    static func isDocumentTimestamp(type: String?, subFilter: String?) -> Bool {
        type == "DocTimeStamp" || subFilter == "ETSI.RFC3161"
    }

    /// Verifies a signature value over `covered`: the CMS signature (DER or BER, zero padding
    /// allowed) with ``CMSVerifier``, or the document timestamp's token.
    /// - Returns: its kind, its verification and, for a document timestamp, the verified token.
    static func verifyValue(
        type: String?,
        subFilter: String?,
        contents: [UInt8],
        covered: [UInt8],
        trustAnchors: [Certificate],
        policy: ValidationPolicy
    ) -> (kind: PDFSignatureKind, verification: VerificationResult, timestamp: VerifiedTimestamp?) {
        guard isDocumentTimestamp(type: type, subFilter: subFilter) else {
            let verification = CMSVerifier.verify(
                signature: contents,
                content: covered,
                trustAnchors: trustAnchors,
                policy: policy
            )
            return (.signature, verification, nil)
        }
        let (verification, timestamp) = verify(
            contents: contents,
            covered: covered,
            trustAnchors: trustAnchors,
            policy: policy
        )
        return (.documentTimestamp, verification, timestamp)
    }

    /// Checks the token in `contents` over `covered`.
    /// - Returns: the check in the shape of a signature verification, and the verified timestamp
    ///   (nil when the token cannot be read at all).
    static func verify(
        contents: [UInt8],
        covered: [UInt8],
        trustAnchors: [Certificate],
        policy: ValidationPolicy
    ) -> (verification: VerificationResult, timestamp: VerifiedTimestamp?) {
        let validationTime = policy.validationTime ?? Date()
        let check = TimestampVerifier.verifyDocumentTimestamp(
            contents: contents,
            coveredBytes: covered,
            trustAnchors: trustAnchors.isEmpty && policy.timestampTrustAnchors == nil
                ? TimestampAnchors.anchors([], token: contents) : policy.timestampTrustAnchors ?? trustAnchors,
            validationTime: validationTime
        )
        let verification = VerificationResult(documentTimestamp: check, validationTime: validationTime)
        let timestamp = check.token.map {
            VerifiedTimestamp(time: $0.time, tsa: $0.authorityCertificate, failure: verification.failure)
        }
        return (verification, timestamp)
    }
}
