public import CertificateProviders
public import Foundation

extension SignatureFormat {
    /// CAdES-T: CAdES-BES (or plain CMS) whose SignerInfos carry an RFC 3161 signature timestamp
    /// (`id-aa-signatureTimeStampToken`) over their signature values (ETSI EN 319 122-1).
    public static let cadesT = SignatureFormat("cades-t")
}

/// An RFC 3161 timestamp token whose signature, imprint and TSA certificate were checked.
public struct TimestampToken: Sendable, Hashable {
    /// The token: a DER CMS ContentInfo (SignedData over a TSTInfo), as it goes into a signature.
    public let derRepresentation: [UInt8]
    /// The time the TSA vouches for (`genTime`).
    public let time: Date
    /// Who issued it: the TSA certificate's subject (RFC 2253), else the token's TSA name.
    public let authority: String
    /// The TSA's signing certificate, when the token carries it.
    public let authorityCertificate: Certificate?
    /// The imprint's digest algorithm (`sha256`, …) as OpenSSL names it.
    public let imprintAlgorithm: String
    /// The token's serial number (hex).
    public let serialNumber: String
    /// The TSA policy OID the token was issued under.
    public let policy: String
    // Tokens are made by the TSA client and by verification (the memberwise initializer).
}

/// What checking a signature timestamp found: the token's facts when it could be read, and why it
/// is not valid, if it is not.
public struct TimestampCheck: Sendable, Hashable {
    /// The token, when it could be parsed (also for an invalid one: its claimed time and TSA).
    public let token: TimestampToken?
    /// Why the token is not valid; nil when it is.
    public let failureReason: String?

    /// Whether the token is valid: signature, imprint over the signer's signature value, TSA
    /// certificate (critical timeStamping EKU) and chain to the TSA trust anchors.
    public var isValid: Bool { failureReason == nil && token != nil }

    /// The class of the failure, nil when the token is valid.
    package let failureKind: TimestampFailureKind?

    /// Creates a check result.
    public init(token: TimestampToken?, failureReason: String?) {
        self.init(token: token, failureReason: failureReason, failureKind: failureReason.map { _ in .other })
    }

    /// Creates a check result whose failure, if any, is of `failureKind`.
    package init(token: TimestampToken?, failureReason: String?, failureKind: TimestampFailureKind?) {
        self.token = token
        self.failureReason = failureReason
        self.failureKind = failureReason == nil ? nil : (failureKind ?? .other)
    }

    /// A failed check of `kind`.
    package init(token: TimestampToken?, failing kind: TimestampFailureKind, _ reason: String) {
        self.init(token: token, failureReason: reason, failureKind: kind)
    }
}
