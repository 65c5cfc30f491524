import CMS
public import CertificateProviders
public import Foundation

/// A signature timestamp (RFC 3161 token in the signer's id-aa-signatureTimeStampToken attribute,
/// CAdES-T) as ``CMSVerifier`` checked it.
public struct VerifiedTimestamp: Sendable, Hashable, CustomStringConvertible {
    /// The time the time-stamping authority vouches for (the token's genTime).
    public let time: Date
    /// The time-stamping authority's certificate, when the token carries or names one.
    public let tsa: Certificate?
    /// Why the token was rejected (wrong imprint, untrusted TSA, …), or nil when it is valid and
    /// trusted. Only a valid token's ``time`` is used as proof of existence.
    public let failure: VerificationFailure?

    /// Whether the token verified: imprint over the signature value, TSA chain to the timestamp
    /// trust anchors, timeStamping extended key usage.
    public var isValid: Bool { failure == nil }

    /// Creates a checked timestamp.
    public init(time: Date, tsa: Certificate?, failure: VerificationFailure?) {
        self.time = time
        self.tsa = tsa
        self.failure = failure
    }

    /// A one-line summary for logs, in the words of ``indication``.
    public var description: String {
        "timestamp \(time) by \(tsa?.subject ?? "unknown TSA"): \(verdict)"
    }
}
