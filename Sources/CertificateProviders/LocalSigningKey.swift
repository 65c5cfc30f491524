package import OpenSSLWrappers

/// A private key held in this process by OpenSSL (an `EVP_PKEY`): RSA, EC (P-256, P-384, P-521) or
/// GOST R 34.10-2012 (256 and 512 bit, through the gost engine: see ``GOSTEngine``).
///
/// Signing is synchronous under the hood and safe to call from many tasks at once: each call uses its
/// own OpenSSL context.
public final class LocalSigningKey: SigningKey, Sendable {
    /// The OpenSSL key, shared with this package's other modules (CMS signing, PKCS#12).
    package let handle: EVPKeyHandle
    /// The key's algorithm, with the curve or GOST parameter set.
    public let publicKeyAlgorithm: PublicKeyAlgorithm
    /// The key size in bits.
    public let keySize: Int
    /// The DER SubjectPublicKeyInfo of the public half.
    public let publicKeyDERRepresentation: [UInt8]

    /// Takes ownership of an `EVP_PKEY*` that holds a private key.
    package init(handle: EVPKeyHandle) {
        self.handle = handle
        publicKeyAlgorithm = handle.algorithm
        keySize = handle.bits
        publicKeyDERRepresentation = handle.publicKeyDER
    }

    /// What kind of key to generate.
    public struct GenerationParameters: Sendable, Hashable, CustomStringConvertible {
        enum Kind: Hashable { case rsa, ec, gost }
        let kind: Kind
        let bits: Int
        /// The EC curve, or the GOST parameter set as gost-engine names it (`A`, `B`, `TCA`, …).
        let curve: String

        var isRSA: Bool { kind == .rsa }

        /// An RSA key of `bits` bits (2048 to 16384).
        public static func rsa(bits: Int) -> Self { Self(kind: .rsa, bits: bits, curve: "") }
        /// RSA-2048.
        public static let rsa2048 = rsa(bits: 2048)
        /// EC on NIST P-256 (prime256v1).
        public static let p256 = Self(kind: .ec, bits: 256, curve: "P-256")
        /// EC on NIST P-384 (secp384r1).
        public static let p384 = Self(kind: .ec, bits: 384, curve: "P-384")
        /// EC on NIST P-521 (secp521r1).
        public static let p521 = Self(kind: .ec, bits: 521, curve: "P-521")
        /// A GOST R 34.10-2012 256-bit key on a parameter set as `openssl genpkey -engine gost
        /// -pkeyopt paramset:…` names it: `A` (CryptoPro A), `B`, `C`, `XA`, `XB`, `TCA` … `TCD` (TC26).
        public static func gost256(parameterSet: String) -> Self { Self(kind: .gost, bits: 256, curve: parameterSet) }
        /// A GOST R 34.10-2012 512-bit key on a parameter set: `A`, `B` or `C` (TC26).
        public static func gost512(parameterSet: String) -> Self { Self(kind: .gost, bits: 512, curve: parameterSet) }
        /// GOST R 34.10-2012 256-bit, parameter set A.
        public static let gost256 = gost256(parameterSet: "A")
        /// GOST R 34.10-2012 512-bit, parameter set A.
        public static let gost512 = gost512(parameterSet: "A")

        /// `RSA-2048`, `EC P-256`, …
        public var description: String {
            switch kind {
            case .rsa: return "RSA-\(bits)"
            case .ec: return "EC \(curve)"
            case .gost: return "GOST R 34.10-2012 \(bits) (paramset \(curve))"
            }
        }
    }

    /// Generates a new key.
    /// - Throws: `.unsupportedAlgorithm` for RSA sizes outside 2048…16384, an unknown GOST
    ///   parameter set, or a GOST key without the gost engine ("GOST needs libengine-gost-openssl").
    public convenience init(generating parameters: GenerationParameters) throws {
        GOSTEngine.load()
        OpenSSLErrorQueue.clear()
        let key: EVPKeyHandle?
        switch parameters.kind {
        case .rsa:
            guard (2048...16384).contains(parameters.bits) else {
                throw CertificateProviderError(
                    .unsupportedAlgorithm,
                    "RSA keys must have 2048 to 16384 bits, not \(parameters.bits)"
                )
            }
            key = EVPKeyHandle.generateRSA(bits: parameters.bits)
        case .ec:
            key = EVPKeyHandle.generateEC(curve: parameters.curve)
        case .gost:
            key = try LocalSigningKey.generateGOST(parameters)
        }
        guard let key else { throw OpenSSLErrorQueue.error(.cryptoFailure, "could not generate a \(parameters) key") }
        self.init(handle: key)
    }

    private static func generateGOST(_ parameters: GenerationParameters) throws -> EVPKeyHandle {
        do {
            return try EVPKeyHandle.generateGOST(bits: parameters.bits, parameterSet: parameters.curve)
        } catch {
            switch error {
            case .engineUnavailable: throw GOSTEngine.unavailableError("a \(parameters) key")
            case .noContext:
                throw OpenSSLErrorQueue.error(.unsupportedAlgorithm, "OpenSSL cannot make \(parameters) keys")
            case .initialization:
                throw OpenSSLErrorQueue.error(.cryptoFailure, "could not start \(parameters) key generation")
            case .unknownParameterSet:
                throw OpenSSLErrorQueue.error(
                    .unsupportedAlgorithm,
                    "'\(parameters.curve)' is not a GOST R 34.10-2012 \(parameters.bits)-bit parameter set"
                )
            case .generation:
                throw OpenSSLErrorQueue.error(.cryptoFailure, "could not generate a \(parameters) key")
            }
        }
    }

    /// Reads a PEM private key (PKCS#8, traditional RSA/EC, encrypted or not).
    /// - Parameters:
    ///   - pem: the PEM text.
    ///   - password: the password of an encrypted key; nil for a plain one.
    /// - Throws: `.wrongPassword`, `.passwordRequired`, `.malformedInput`.
    public convenience init(pemEncoded pem: String, password: Secret? = nil) throws {
        GOSTEngine.load()
        OpenSSLErrorQueue.clear()
        let encrypted = pem.contains("ENCRYPTED")
        if encrypted && password == nil {
            throw CertificateProviderError(.passwordRequired, "the private key is encrypted; give its password")
        }
        let key = try CertificateProviderError.convertingOpenSSLErrors {
            if let password {
                return try password.withCString { try EVPKeyHandle.privateKey(pem: Array(pem.utf8), password: $0) }
            }
            return try EVPKeyHandle.privateKey(pem: Array(pem.utf8), password: nil)
        }
        guard let key else {
            if encrypted {
                throw OpenSSLErrorQueue.error(.wrongPassword, "the password does not decrypt the private key")
            }
            throw OpenSSLErrorQueue.error(.malformedInput, "no readable PEM private key found")
        }
        self.init(handle: key)
    }

    /// Reads a DER PKCS#8 (unencrypted) private key.
    /// - Throws: `.malformedInput`.
    public convenience init(pkcs8DEREncoded der: [UInt8]) throws {
        GOSTEngine.load()
        OpenSSLErrorQueue.clear()
        guard let key = EVPKeyHandle.privateKey(der: der) else {
            throw OpenSSLErrorQueue.error(.malformedInput, "the bytes are not a DER private key")
        }
        self.init(handle: key)
    }

    /// The key as PKCS#8 PEM, encrypted with AES-256-CBC (PBKDF2) when a password is given.
    ///
    /// Meant for test fixtures and explicit exports; the key otherwise never leaves the process.
    public func pemRepresentation(password: Secret?) throws -> String {
        OpenSSLErrorQueue.clear()
        let bytes = try CertificateProviderError.convertingOpenSSLErrors {
            if let password {
                return try password.withCString { cString in
                    try password.withUnsafeBytes { raw in try handle.pkcs8PEM(password: (cString, raw.count)) }
                }
            }
            return try handle.pkcs8PEM(password: nil)
        }
        guard let bytes else { throw OpenSSLErrorQueue.error(.cryptoFailure, "could not encode the private key") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The public key as PEM (`-----BEGIN PUBLIC KEY-----`).
    public var publicKeyPEMRepresentation: String {
        String(decoding: handle.publicKeyPEM, as: UTF8.self)
    }

    /// Signs a precomputed digest, its length checked, without suspending.
    /// - Throws: `.unsupportedAlgorithm` for a scheme or digest that does not fit the key (a GOST key
    ///   signs only its own Streebog size).
    package func signChecked(
        _ digest: [UInt8],
        _ digestAlgorithm: DigestAlgorithm,
        _ scheme: SignatureScheme
    ) throws -> [UInt8] {
        try checkScheme(scheme)
        try checkDigest(digestAlgorithm)
        let parameters = try digestAlgorithm.signatureParameters(scheme: scheme, keyAlgorithm: publicKeyAlgorithm)
        OpenSSLErrorQueue.clear()
        do {
            return try handle.sign(digest: digest, parameters)
        } catch {
            switch error {
            case .context: throw OpenSSLErrorQueue.error(.cryptoFailure, "could not create a signing context")
            case .initialization:
                throw OpenSSLErrorQueue.error(
                    .unsupportedAlgorithm,
                    "the \(publicKeyAlgorithm) key cannot sign \(digestAlgorithm) digests"
                )
            case .padding: throw OpenSSLErrorQueue.error(.unsupportedAlgorithm, "could not select \(scheme) padding")
            case .pssParameters: throw OpenSSLErrorQueue.error(.unsupportedAlgorithm, "could not configure RSA-PSS")
            case .sizing: throw OpenSSLErrorQueue.error(.cryptoFailure, "could not size the signature")
            case .signing: throw OpenSSLErrorQueue.error(.cryptoFailure, "signing failed")
            }
        }
    }

    /// Checks a signature made by this key (or its public half) over `data`.
    public func isValidSignature(
        _ signature: [UInt8],
        for data: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) -> Bool {
        guard (try? checkScheme(scheme)) != nil, (try? checkDigest(digestAlgorithm)) != nil,
            let parameters = try? digestAlgorithm.signatureParameters(scheme: scheme, keyAlgorithm: publicKeyAlgorithm)
        else { return false }
        return handle.isValidSignature(signature, forDigest: digestAlgorithm.hash(data), parameters)
    }

    private func checkDigest(_ digestAlgorithm: DigestAlgorithm) throws {
        guard publicKeyAlgorithm.isGOST || digestAlgorithm.isGOST else { return }
        let fitting = try DigestAlgorithm.preferred(for: publicKeyAlgorithm)
        guard fitting == digestAlgorithm else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "a \(publicKeyAlgorithm.family) key signs \(fitting.displayName) digests, not "
                    + "\(digestAlgorithm.displayName)"
            )
        }
    }

    private func checkScheme(_ scheme: SignatureScheme) throws {
        let fits: Bool
        if publicKeyAlgorithm.isRSA {
            fits = scheme == .rsaPKCS1v15 || scheme == .rsaPSS
        } else if publicKeyAlgorithm.isGOST {
            fits = scheme == .gostR34102012
        } else {
            fits = publicKeyAlgorithm.isEC && scheme == .ecdsa
        }
        guard fits else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "a \(publicKeyAlgorithm) key cannot sign with \(scheme)"
            )
        }
    }
}

extension LocalSigningKey: SynchronousSigningKey {}
