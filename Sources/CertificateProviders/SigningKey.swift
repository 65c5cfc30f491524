/// A private key that can sign: a local OpenSSL key, or a handle to a key held by a server or token.
///
/// Contract:
/// - ``signature(for:digestAlgorithm:scheme:)`` hashes `data` with `digestAlgorithm` and signs it;
/// - ``signature(forDigest:digestAlgorithm:scheme:)`` signs a digest computed by the caller; for RSA
///   PKCS#1 v1.5 the implementation wraps it in a DigestInfo, so both calls give the same signature;
/// - ECDSA signatures are DER-encoded `ECDSA-Sig-Value`s (as CMS and `openssl dgst` use);
/// - RSA-PSS uses MGF1 with the same digest and a salt as long as the digest;
/// - GOST R 34.10-2012 signatures are the raw signature value (`s || r`, 64 or 128 bytes) that CMS
///   carries (RFC 9215), over a Streebog digest.
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
    func signature(
        forDigest digest: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [UInt8]
}

extension SigningKey {
    /// Hashes `data` locally and calls ``SigningKey/signature(forDigest:digestAlgorithm:scheme:)``.
    public func signature(
        for data: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [UInt8] {
        try await signature(forDigest: digestAlgorithm.hash(data), digestAlgorithm: digestAlgorithm, scheme: scheme)
    }

    /// The scheme to use by default with this key: PKCS#1 v1.5 for RSA, ECDSA for EC, GOST R
    /// 34.10-2012 for GOST keys.
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
    /// The scheme's name.
    public var description: String { rawValue }

    /// RSASSA-PKCS1-v1_5 (RFC 8017), deterministic.
    public static let rsaPKCS1v15 = SignatureScheme("rsa-pkcs1v15")
    /// RSASSA-PSS (RFC 8017), MGF1 with the message digest, salt length = digest length.
    public static let rsaPSS = SignatureScheme("rsa-pss")
    /// ECDSA with a DER-encoded signature value.
    public static let ecdsa = SignatureScheme("ecdsa")
    /// GOST R 34.10-2012 (256- or 512-bit keys) with the raw signature value CMS carries.
    public static let gostR34102012 = SignatureScheme("gost-r-34.10-2012")

    /// The usual scheme for a key algorithm.
    public static func `default`(for algorithm: PublicKeyAlgorithm) -> SignatureScheme {
        if algorithm.isRSA { return .rsaPKCS1v15 }
        return algorithm.isGOST ? .gostR34102012 : .ecdsa
    }
}

/// A public-key algorithm, with the curve for EC keys and the parameter set for GOST keys: an open
/// set.
public struct PublicKeyAlgorithm: Hashable, Sendable, CustomStringConvertible {
    /// The display name (`RSA`, `EC P-256`,
    /// `GOST R 34.10-2012 256 (id-tc26-gost-3410-2012-256-paramSetA)`, …).
    public let rawValue: String
    /// Creates an algorithm from its display name.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The display name.
    public var description: String { rawValue }

    /// RSA, any modulus size.
    public static let rsa = PublicKeyAlgorithm("RSA")
    /// ECDSA on NIST P-256 (prime256v1).
    public static let ecP256 = PublicKeyAlgorithm("EC P-256")
    /// ECDSA on NIST P-384 (secp384r1).
    public static let ecP384 = PublicKeyAlgorithm("EC P-384")
    /// ECDSA on NIST P-521 (secp521r1).
    public static let ecP521 = PublicKeyAlgorithm("EC P-521")
    /// Ed25519 (RFC 8032).
    public static let ed25519 = PublicKeyAlgorithm("Ed25519")

    /// Whether this is an RSA key.
    public var isRSA: Bool { self == .rsa }
    /// Whether this is an EC (ECDSA) key on any curve.
    public var isEC: Bool { rawValue.hasPrefix("EC ") }

    private static let gostPrefix = "GOST R 34.10-2012 "

    /// A GOST R 34.10-2012 key of `bits` bits (256 or 512) on the named parameter set (OpenSSL's
    /// short name, `id-tc26-gost-3410-2012-512-paramSetA`; nil when unknown).
    public static func gostR34102012(bits: Int, parameterSet: String?) -> PublicKeyAlgorithm {
        PublicKeyAlgorithm(gostPrefix + "\(bits)" + (parameterSet.map { " (\($0))" } ?? ""))
    }

    /// Whether this is a GOST R 34.10-2012 key (256 or 512 bits, any parameter set).
    public var isGOST: Bool { rawValue.hasPrefix(Self.gostPrefix) }

    /// For GOST keys, the key size the name states (256 or 512); nil for other keys.
    public var gostKeySize: Int? {
        guard isGOST else { return nil }
        return Int(rawValue.dropFirst(Self.gostPrefix.count).prefix(while: \.isNumber))
    }

    /// For GOST keys, the parameter set (`id-GostR3410-2001-CryptoPro-A-ParamSet`, …); nil otherwise.
    public var gostParameterSet: String? {
        guard isGOST, let open = rawValue.firstIndex(of: "("), rawValue.hasSuffix(")") else { return nil }
        return String(rawValue[rawValue.index(after: open)..<rawValue.index(before: rawValue.endIndex)])
    }

    /// The family without curve or parameter set: `RSA`, `EC`, `GOST R 34.10-2012 256`, `Ed25519`.
    public var family: String {
        if isEC { return "EC" }
        if let size = gostKeySize { return Self.gostPrefix + "\(size)" }
        return rawValue
    }
}
