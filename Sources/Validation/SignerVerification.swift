import CMS
public import CertificateProviders
public import Foundation

/// What ``CMSVerifier`` found out about one signer (one CMS SignerInfo) of a signature.
///
/// A signature is valid only when every one of its signers is (``VerificationResult/signers``).
public struct SignerVerification: Sendable, CustomStringConvertible {
    /// Why this signer was rejected, or nil when every check passed.
    public let failure: VerificationFailure?
    /// The signer's certificate, when the signature contains it.
    public let signerCertificate: Certificate?
    /// The *claimed* signing time: the signingTime attribute the signer wrote, when present. It is
    /// reported, never trusted: the chain is checked at ``checkedAt``.
    public let signingTime: Date?
    /// The digest algorithm, when it is one this package signs with (SHA-2).
    public let digestAlgorithm: DigestAlgorithm?
    /// The digest algorithm's name as OpenSSL knows it (`sha256`, `sha1`, `md5`,
    /// `md_gost12_256`, …), or the dotted OID of one it does not know; nil when unreadable.
    public let digestAlgorithmName: String?
    /// The signature algorithm's name as OpenSSL knows it (`rsaEncryption`,
    /// `ecdsa-with-SHA256`, `RSASSA-PSS`, …) or its dotted OID; nil when unreadable.
    public let signatureAlgorithmName: String?
    /// `.cadesBES` when the signer carries ESS signing-certificate(-v2) (`.cadesT` when it also
    /// carries a signature timestamp), else `.cms`.
    public let format: SignatureFormat
    /// Whether the chain was checked against trust anchors and found valid.
    public let chainChecked: Bool
    /// The verified chain, signer first and trust anchor last, when ``chainChecked``; otherwise
    /// the signer followed by the other certificates the signature carries.
    public let chain: [Certificate]
    /// The time the signer's certificate and chain were checked at: the proven time of a valid
    /// trusted signature timestamp when it lies inside the certificate's validity, else the
    /// policy's validation time (now by default). Nil when verification stopped before.
    public let checkedAt: Date?
    /// The signature timestamp (CAdES-T) of this signer and whether it verified; nil when the
    /// signer has none.
    public let timestamp: VerifiedTimestamp?
    /// The revocation status of the signer's path, nil when revocation was not checked: the
    /// summary, with one status per certificate of the signer's and its time-stamping authority's
    /// paths, trust anchors excepted, in ``RevocationStatus/certificates``.
    public let revocation: RevocationStatus?
    /// The SignerInfo's signature value, as it stands in the signature (empty when it could not be
    /// read): what identifies this signature in a validation report.
    public let signatureValue: [UInt8]

    /// Whether every check passed for this signer.
    public var isValid: Bool { failure == nil }

    /// Creates a per-signer result (``CMSVerifier`` makes these; public for tests and tools).
    public init(
        failure: VerificationFailure?,
        signerCertificate: Certificate?,
        signingTime: Date?,
        digestAlgorithm: DigestAlgorithm?,
        digestAlgorithmName: String?,
        signatureAlgorithmName: String?,
        format: SignatureFormat,
        chainChecked: Bool,
        chain: [Certificate],
        checkedAt: Date?,
        timestamp: VerifiedTimestamp?,
        revocation: RevocationStatus?,
        signatureValue: [UInt8] = []
    ) {
        self.failure = failure
        self.signerCertificate = signerCertificate
        self.signingTime = signingTime
        self.digestAlgorithm = digestAlgorithm
        self.digestAlgorithmName = digestAlgorithmName
        self.signatureAlgorithmName = signatureAlgorithmName
        self.format = format
        self.chainChecked = chainChecked
        self.chain = chain
        self.checkedAt = checkedAt
        self.timestamp = timestamp
        self.revocation = revocation
        self.signatureValue = signatureValue
    }

    /// A one-line summary for logs, in the words of ``indication``.
    public var description: String {
        "\(verdict); signer: \(signerCertificate?.subject ?? "unknown signer")"
    }
}
