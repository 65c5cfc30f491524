/// A private key that can sign: a local OpenSSL key, or a handle to a key held by a server or token.
///
/// Contract:
/// - ``signature(for:digestAlgorithm:scheme:)`` hashes `data` with `digestAlgorithm` and signs it;
/// - ``signature(forDigest:digestAlgorithm:scheme:)`` signs a digest computed by the caller; for RSA
///   PKCS#1 v1.5 the implementation wraps it in a DigestInfo, so both calls give the same signature;
/// - ECDSA signatures are DER-encoded `ECDSA-Sig-Value`s (as CMS and `openssl dgst` use);
/// - RSA-PSS uses MGF1 with the same digest and a salt as long as the digest.
/// The calls may suspend (a remote key goes to its server) and may be made concurrently.
public protocol SigningKey: Sendable {
    /// The key's algorithm (RSA, or EC with its curve).
    var publicKeyAlgorithm: PublicKeyAlgorithm { get }
    /// The key size in bits (RSA modulus size, EC field size).
    var keySize: Int { get }
    /// The DER `SubjectPublicKeyInfo` of the public half.
    var publicKeyDERRepresentation: [UInt8] { get }
    /// The scheme signers use with this key unless told otherwise (default: PKCS#1 v1.5 for RSA,
    /// ECDSA for EC; a key configured for RSA-PSS returns `.rsaPSS`).
    var defaultScheme: SignatureScheme { get }

    /// Signs `data`, hashing it with `digestAlgorithm`.
    func signature(for data: [UInt8], digestAlgorithm: DigestAlgorithm, scheme: SignatureScheme) async throws -> [UInt8]

    /// Signs a precomputed digest.
    /// - Throws: `.invalidParameter` when the digest length does not match `digestAlgorithm`;
    ///   `.unsupportedAlgorithm` when the scheme does not fit the key.
    func signature(forDigest digest: [UInt8], digestAlgorithm: DigestAlgorithm, scheme: SignatureScheme) async throws -> [UInt8]
}

extension SigningKey {
    /// Hashes `data` locally and calls ``signature(forDigest:digestAlgorithm:scheme:)``.
    public func signature(for data: [UInt8], digestAlgorithm: DigestAlgorithm, scheme: SignatureScheme) async throws -> [UInt8] {
        try await signature(forDigest: digestAlgorithm.hash(data), digestAlgorithm: digestAlgorithm, scheme: scheme)
    }

    /// The scheme to use by default with this key: PKCS#1 v1.5 for RSA, ECDSA for EC.
    public var defaultScheme: SignatureScheme { SignatureScheme.default(for: publicKeyAlgorithm) }

    /// Whether this key is the private half of `certificate`'s public key.
    public func matches(_ certificate: Certificate) -> Bool {
        publicKeyDERRepresentation == certificate.publicKeyDERRepresentation
    }
}

/// A signature padding / scheme: an open set.
public struct SignatureScheme: Hashable, Sendable, CustomStringConvertible {
    /// The scheme's name (`rsa-pkcs1v15`, `rsa-pss`, `ecdsa`).
    public let rawValue: String
    /// Creates a scheme from its name.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// RSASSA-PKCS1-v1_5 (RFC 8017), deterministic.
    public static let rsaPKCS1v15 = SignatureScheme("rsa-pkcs1v15")
    /// RSASSA-PSS (RFC 8017), MGF1 with the message digest, salt length = digest length.
    public static let rsaPSS = SignatureScheme("rsa-pss")
    /// ECDSA with a DER-encoded signature value.
    public static let ecdsa = SignatureScheme("ecdsa")

    /// The usual scheme for a key algorithm.
    public static func `default`(for algorithm: PublicKeyAlgorithm) -> SignatureScheme {
        algorithm.isRSA ? .rsaPKCS1v15 : .ecdsa
    }
}

/// A public-key algorithm, with the curve for EC keys: an open set.
public struct PublicKeyAlgorithm: Hashable, Sendable, CustomStringConvertible {
    /// The display name (`RSA`, `EC P-256`, …).
    public let rawValue: String
    /// Creates an algorithm from its display name.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let rsa = PublicKeyAlgorithm("RSA")
    public static let ecP256 = PublicKeyAlgorithm("EC P-256")
    public static let ecP384 = PublicKeyAlgorithm("EC P-384")
    public static let ecP521 = PublicKeyAlgorithm("EC P-521")
    public static let ed25519 = PublicKeyAlgorithm("Ed25519")

    /// Whether this is an RSA key.
    public var isRSA: Bool { self == .rsa }
    /// Whether this is an EC (ECDSA) key on any curve.
    public var isEC: Bool { rawValue.hasPrefix("EC ") }
}
