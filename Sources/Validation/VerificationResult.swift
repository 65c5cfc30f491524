import CMS
public import CertificateProviders
public import Foundation

/// Why a signature was rejected: a code a program can switch on and a sentence a user understands.
public struct VerificationFailure: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    OpenSSLErrorReporting
{
    /// The class of failure: an open set.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable name (`contentChanged`, …).
        public let rawValue: String
        /// Creates a code.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// One of this module's codes.
        package init(_ name: VerificationCodeName) { self.rawValue = name.rawValue }
        /// A one-line summary for logs and command-line output.
        public var description: String { rawValue }

        /// The content's digest does not match the signature: the document was changed.
        public static let contentChanged = Code(.contentChanged)
        /// A detached signature was checked without its content.
        public static let contentMissing = Code(.contentMissing)
        /// The signer's chain does not lead to any of the given trust anchors.
        public static let untrustedSigner = Code(.untrustedSigner)
        /// A certificate of the chain was not valid at the time it was checked at: the validation
        /// time (now by default), or the time a valid trusted signature timestamp proves.
        public static let signerExpired = Code(.signerExpired)
        /// The bytes are not a CMS SignedData (garbage, truncated, another format).
        public static let malformed = Code(.malformed)
        /// The signature value does not verify with the signer's key.
        public static let signatureInvalid = Code(.signatureInvalid)
        /// The certificate in the signature is not the one the signer signed (ESS signing-certificate
        /// hash mismatch): it was swapped.
        public static let certificateSwapped = Code(.certificateSwapped)
        /// The signature does not contain the certificate its SignerInfo names.
        public static let signerCertificateMissing = Code(.signerCertificateMissing)
        /// A digest or signature algorithm, or a key size, that the ``ValidationPolicy`` refuses
        /// (MD5, SHA-1, RSA under 2048 bits, EC under 256 bits by default); the reason names it.
        public static let weakAlgorithm = Code(.weakAlgorithm)
        /// The signer's certificate is not meant for signing documents (its keyUsage or
        /// extendedKeyUsage says so, e.g. a TLS server certificate).
        public static let certificateNotForSigning = Code(.certificateNotForSigning)
        /// The signer's signature timestamp does not verify (imprint, TSA chain, purpose).
        public static let timestampInvalid = Code(.timestampInvalid)
        /// The signer's signature timestamp would verify but for its TSA's certificate (or a CA
        /// certificate above it) having expired, or not yet being valid, at the validation time:
        /// nothing proves the timestamp existed while it was valid (an archive timestamp, B-LTA,
        /// would). The reason names the certificate and its dates.
        public static let timestampExpired = Code(.timestampExpired)
        /// A certificate of the signer's chain was revoked before the signature was proven to exist.
        public static let signerRevoked = Code(.signerRevoked)
        /// Revocation was asked for, and no usable answer could be had.
        public static let revocationUnknown = Code(.revocationUnknown)
        /// The signature uses an algorithm this OpenSSL cannot check (GOST without the gost engine:
        /// the reason says what to install).
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// The SignerInfo's algorithms do not fit together: the signature algorithm hashes with
        /// another digest than its `digestAlgorithm` (SHA-256 digest, `sha512WithRSAEncryption`), or
        /// it is not the algorithm of the signer's key (an Ed25519 key, an Ed448 signature). EU DSS and
        /// pyHanko refuse these too.
        public static let algorithmMismatch = Code(.algorithmMismatch)
        /// The signature carries more certificates, CRLs, signers or attributes than
        /// `SignedDataLimits` allows; it is refused before any of them is read (the reason says
        /// which count and its limit).
        public static let limitExceeded = Code(.limitExceeded)
    }

    /// What failed.
    public let code: Code
    /// A sentence saying what failed and what it means.
    public let reason: String
    /// OpenSSL's error strings, when OpenSSL reported the failure: shown by ``debugDescription`` only.
    package let openSSLErrors: [String]
    /// For a timestamp's failure, its class as the token's check found it: what its ETSI indication
    /// is derived from (never ``reason``, which names certificates by their subjects). Nil for other
    /// failures, and for one made with the public initializer.
    package let timestampKind: TimestampFailureKind?

    /// Creates a failure.
    public init(_ code: Code, _ reason: String) {
        self.init(code, reason, openSSLErrors: [])
    }

    /// Creates a failure that keeps the strings drained from OpenSSL's error queue and, for a
    /// timestamp's failure, its class.
    package init(
        _ code: Code,
        _ reason: String,
        openSSLErrors: [String] = [],
        timestampKind: TimestampFailureKind? = nil
    ) {
        self.code = code
        self.reason = reason
        self.openSSLErrors = openSSLErrors
        self.timestampKind = timestampKind
    }

    /// A one-line summary for logs and command-line output.
    public var description: String { "\(code): \(reason)" }

    /// ``description``, with OpenSSL's error lines when there are any (for logs and debugging).
    public var debugDescription: String { descriptionWithOpenSSLErrors }
}

/// The names of the ``VerificationFailure/Code``s: each case's name is the code's raw value.
package enum VerificationCodeName: String {
    case contentChanged, contentMissing, untrustedSigner, signerExpired, malformed, signatureInvalid,
        certificateSwapped, signerCertificateMissing, weakAlgorithm, certificateNotForSigning, timestampInvalid,
        signerRevoked, revocationUnknown, unsupportedAlgorithm, algorithmMismatch, limitExceeded, timestampExpired
}

/// What ``CMSVerifier`` found out about a signature.
///
/// The signature is valid only when its structure is sound, its content is the signed one, and
/// every signer in ``signers`` is valid. The single-signer fields (``signerCertificate``,
/// ``signingTime``, ``chain``, …) describe the first signer, as they always have.
public struct VerificationResult: Sendable, CustomStringConvertible {
    /// Why the signature was rejected, or nil when it is valid: the structure's failure, or the
    /// failure of the first signer that failed (its reason names the signer when there are several).
    public let failure: VerificationFailure?
    /// The first signer's certificate, when the signature contains it.
    public let signerCertificate: Certificate?
    /// The first signer's *claimed* signing time (the signingTime attribute), when present. It is
    /// reported, never trusted: see ``ValidationPolicy/validationTime``.
    public let signingTime: Date?
    /// The first signer's digest algorithm, when it is one this package signs with.
    public let digestAlgorithm: DigestAlgorithm?
    /// `.cadesBES` when the first signer carries ESS signing-certificate(-v2) (`.cadesT` when it
    /// also carries a signature timestamp), else `.cms`; nil when malformed.
    public let format: SignatureFormat?
    /// Whether the signature is detached (holds no content).
    public let isDetached: Bool
    /// Whether the first signer's chain was checked against trust anchors. When false, only the
    /// signature, content digest, ESS binding and the signer's validity period were checked.
    public let chainChecked: Bool
    /// The verified chain, signer first and trust anchor last, when ``chainChecked`` and valid;
    /// otherwise the signer followed by the other certificates the signature carries.
    public let chain: [Certificate]
    /// The content embedded in an attached signature (nil for detached ones). It is the content
    /// verified; content given beside it must be byte-identical.
    public let embeddedContent: [UInt8]?
    /// Every signer, in the order of the signature's SignerInfos; empty when the structure is not
    /// a readable SignedData.
    public let signers: [SignerVerification]
    /// The policy's validation time as used (now, when the policy leaves it nil).
    public let validationTime: Date
    /// Past signature validation (ETSI EN 319 102-1 §5.6.2.4) of a CAdES-LTA signature that does
    /// not verify at the validation time: the time its first archive timestamp proves, at which it
    /// verified (each archive timestamp valid at the time the next one proves, the last at the
    /// validation time); nil when it was not needed.
    public var pastValidationTime: Date? = nil

    /// Whether every check passed.
    public var isValid: Bool { failure == nil }

    /// A one-line summary for logs, in the words of ``indication``: `PASSED; signer: …`,
    /// `FAILED: HASH_FAILURE — reason; signer: …`.
    public var description: String {
        "\(verdict); signer: \(signerCertificate?.subject ?? "unknown signer")"
    }
}
