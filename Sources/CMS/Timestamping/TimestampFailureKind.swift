/// The class of a timestamp token's failure, as its check found it: what a verdict on the token
/// (an ETSI EN 319 102-1 indication) is derived from, so that the sentence said to the user (which
/// names the TSA's certificate, whose subject is anyone's text) plays no part in it.
package enum TimestampFailureKind: Sendable, Hashable {
    /// Not an RFC 3161 token: not a SignedData, no TSTInfo, an unsupported version, bytes after it.
    case notAToken
    /// The message imprint does not match the data the token must cover (or the data an archive
    /// timestamp covers is missing or was changed).
    case imprintMismatch
    /// The token's signature does not verify with the TSA's certificate.
    case signatureInvalid
    /// The TSA's certificate does not chain to a trusted anchor, or no anchors were given for it.
    case untrustedAuthority
    /// The TSA's certificate is not a time-stamping certificate (critical timeStamping EKU).
    case notTimeStampingCertificate
    /// A certificate of the TSA's path is out of its validity at the time it is checked at.
    case authorityOutOfValidity
    /// The token does not carry the TSA's certificate.
    case authorityCertificateMissing
    /// The token's time lies after the validation time.
    case timeAfterValidation
    /// A certificate of the TSA's path was revoked.
    case authorityRevoked
    /// Anything else (a form this verifier does not check, a failure OpenSSL does not name).
    case other
}
