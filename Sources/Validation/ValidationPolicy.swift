import CMS
public import CertificateProviders
public import Foundation

/// How strictly ``CMSVerifier`` judges a signature: the validation time, the algorithms and keys it
/// accepts, whether the signer's certificate must be fit for signing, and where revocation
/// information comes from and how fresh it must be.
///
/// The defaults are the ones of ETSI EN 319 102-1 basic signature validation as EU DSS and pyHanko
/// apply them: the chain is checked **now**, MD5 and SHA-1 are refused, RSA keys need 2048 bits and
/// EC keys 256, the signer's certificate must allow signing, and nothing is fetched from the
/// network. Loosen a field explicitly when you must (checking an old archive, for instance); every
/// loosening is visible in the calling code.
///
/// ```swift
/// var policy = ValidationPolicy()
/// policy.validationTime = ISO8601DateFormatter().date(from: "2026-01-31T12:00:00Z")  // an audit
/// let result = CMSVerifier.verify(signature: p7s, content: document, trustAnchors: roots, policy: policy)
/// ```
public struct ValidationPolicy: Sendable {
    /// The time the signer's certificate and chain must be valid at. Default nil: now, read once
    /// when verification starts.
    ///
    /// The `signingTime` attribute never takes its place: the signer writes it, so it is only a
    /// claim (reported as ``SignerVerification/signingTime``). A valid, trusted signature timestamp
    /// does: when the time it proves lies inside the signer certificate's validity, the chain is
    /// checked at that time instead.
    public var validationTime: Date?

    /// Which digest and signature algorithms and which key sizes are accepted. Default
    /// ``AlgorithmPolicy/strict``.
    public var algorithms: AlgorithmPolicy

    /// Whether the signer's certificate must be fit for signing documents. Default true:
    /// keyUsage, when present, must include digitalSignature or nonRepudiation, and
    /// extendedKeyUsage, when present, must include emailProtection, documentSigning
    /// (1.3.6.1.5.5.7.3.36) or anyExtendedKeyUsage; otherwise the signature fails with
    /// ``VerificationFailure/Code/certificateNotForSigning``.
    public var requiresSigningKeyUsage: Bool

    /// Whether to ask the network for revocation information (OCSP from the certificate's
    /// authority information access, else its CRL distribution points). Default false: verification
    /// makes no network request at all.
    public var checkRevocation: Bool

    /// CRLs (DER or PEM, one CRL or a PEM bundle per element) to check the chain against, without
    /// any network request. Default empty.
    public var crls: [[UInt8]]

    /// The trust anchors for the time-stamping authorities of signature timestamps. Default nil:
    /// the signature's own trust anchors.
    public var timestampTrustAnchors: [Certificate]?

    /// The oldest an OCSP answer without nextUpdate may be, in seconds from its thisUpdate to the
    /// validation time. Default 7 days (604 800 s): the longest interval at which the CA/Browser
    /// Forum requires responders to refresh their answers, so an older answer without nextUpdate
    /// could be a replay. Answers with nextUpdate are current until it passes.
    ///
    /// Every OCSP answer must also have thisUpdate no later than the validation time plus 300 s of
    /// clock skew and no earlier than the certificate's notBefore, answer for the certificate asked
    /// (CertID), and carry back the nonce of the request when ``requiresOCSPNonce`` is set.
    public var revocationMaximumAge: TimeInterval

    /// Whether an OCSP answer must echo the nonce of the request (RFC 8954). An answer that
    /// carries a nonce must always carry the request's (else it is not used: a replay); one that
    /// carries none is used by default, as openssl and pyHanko do, since many responders serve
    /// pre-signed answers and ignore nonces (RFC 5019): the freshness checks (thisUpdate,
    /// nextUpdate, ``revocationMaximumAge``) are what keeps an old answer from being replayed. Set
    /// true to refuse answers without the nonce (the CRL distribution points are then tried).
    public var requiresOCSPNonce: Bool

    /// Creates a policy; every parameter defaults to the strict, offline value documented on its
    /// property.
    public init(
        validationTime: Date? = nil,
        algorithms: AlgorithmPolicy = .strict,
        requiresSigningKeyUsage: Bool = true,
        checkRevocation: Bool = false,
        crls: [[UInt8]] = [],
        timestampTrustAnchors: [Certificate]? = nil,
        revocationMaximumAge: TimeInterval = 7 * 86_400,
        requiresOCSPNonce: Bool = false
    ) {
        self.validationTime = validationTime
        self.algorithms = algorithms
        self.requiresSigningKeyUsage = requiresSigningKeyUsage
        self.checkRevocation = checkRevocation
        self.crls = crls
        self.timestampTrustAnchors = timestampTrustAnchors
        self.revocationMaximumAge = revocationMaximumAge
        self.requiresOCSPNonce = requiresOCSPNonce
    }

    /// OCSP answers fetched over the network before verification, by certificate SHA-256
    /// fingerprint (set by the asynchronous `CMSVerifier.verify(…, fetcher:)`).
    package var onlineRevocationAnswers: [String: RevocationStatus] = [:]

    /// CRLs fetched from CRL distribution points before verification; judged with ``crls``.
    package var fetchedCRLs: [(crl: CertificateRevocationList, source: String)] = []

    /// The CRLs and OCSP responses the signature itself carries (B-LT), set by the verifier; they
    /// are used offline, without `checkRevocation`.
    package var embeddedCRLs: [CertificateRevocationList] = []
    /// The OCSP responses (DER) the signature carries in `SignedData.crls` (RFC 5940).
    package var embeddedOCSPResponses: [[UInt8]] = []

    /// The validation data the document carries beside the signature (a PDF's `/DSS`), set by the
    /// PDF verifier: its certificates join the chain's pool, its CRLs and OCSP responses the
    /// embedded ones (used offline, as the signature's own are).
    package var documentValidationData = ValidationData()

    /// Past signature validation: the real validation time, at which the last archive timestamp
    /// must verify, while ``validationTime`` is the time the first one proves (nil: not past).
    package var archiveChainTime: Date?

    /// What checking the signature's archive timestamps needs, set by the verifier (nil: none).
    package var archiveTimestampBase: ArchiveTimestampCheck.Base?

    /// Whether revocation is to be checked at all (asked for, CRLs given, or carried by the
    /// signature).
    package var wantsRevocation: Bool {
        checkRevocation || !crls.isEmpty || !embeddedCRLs.isEmpty || !embeddedOCSPResponses.isEmpty
    }
}

/// The cryptographic constraints of a ``ValidationPolicy``: digests refused as message digest or
/// inside the signature algorithm, and the smallest RSA and EC keys accepted (the signer's and
/// those of the certificates above it, trust anchors excepted).
public struct AlgorithmPolicy: Sendable, Hashable {
    /// Digest names (OpenSSL short names, lower case: `md5`, `sha1`) that fail with
    /// ``VerificationFailure/Code/weakAlgorithm``.
    public var refusedDigests: Set<String>
    /// The smallest RSA modulus accepted, in bits.
    public var minimumRSAKeyBits: Int
    /// The smallest EC key accepted, in bits (the curve's order size).
    public var minimumECKeyBits: Int

    /// Creates a policy.
    public init(refusedDigests: Set<String>, minimumRSAKeyBits: Int, minimumECKeyBits: Int) {
        self.refusedDigests = refusedDigests
        self.minimumRSAKeyBits = minimumRSAKeyBits
        self.minimumECKeyBits = minimumECKeyBits
    }

    /// The default: MD2, MD4, MD5 and SHA-1 refused; RSA ≥ 2048 bits; EC ≥ 256 bits.
    public static let strict = AlgorithmPolicy(
        refusedDigests: ["md2", "md4", "md5", "sha1"],
        minimumRSAKeyBits: 2048,
        minimumECKeyBits: 256
    )

    /// Accepts every algorithm OpenSSL can verify, for reading old archives. Say so to your users:
    /// a signature with MD5 or SHA-1 can be forged.
    public static let permissive = AlgorithmPolicy(refusedDigests: [], minimumRSAKeyBits: 0, minimumECKeyBits: 0)
}
