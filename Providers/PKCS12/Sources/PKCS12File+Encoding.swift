internal import COpenSSL
internal import COpenSSLShims
public import CertificateProviders
internal import OpenSSLWrappers

extension PKCS12File {
    /// How ``encode(_:password:friendlyName:options:)`` protects a file.
    public struct EncodingOptions: Sendable, Hashable {
        /// PBKDF2 iterations for the key and the certificates (PBES2, AES-256-CBC, HMAC-SHA256).
        /// Default 10 000, as JDK `keytool` writes (OpenSSL's default is 2048).
        public var iterations: Int
        /// Iterations of the SHA-256 MAC's key derivation. Default 10 000. Ignored when
        /// ``includesMAC`` is false.
        public var macIterations: Int
        /// Whether the certificate bags are encrypted too (default true). Certificates are public;
        /// leaving them in the clear saves one key derivation per open (`openssl pkcs12 -certpbe NONE`).
        public var encryptsCertificates: Bool
        /// Whether the file carries a password-based MAC (default true). Without it the file is what
        /// `openssl pkcs12 -export -nomac` writes: one key derivation fewer per open, and integrity
        /// then rests on the encrypted key decrypting, parsing and matching its certificate.
        public var includesMAC: Bool

        /// Creates options.
        public init(
            iterations: Int = 10_000,
            macIterations: Int = 10_000,
            encryptsCertificates: Bool = true,
            includesMAC: Bool = true
        ) {
            self.iterations = iterations
            self.macIterations = macIterations
            self.encryptsCertificates = encryptsCertificates
            self.includesMAC = includesMAC
        }

        /// The defaults: 10 000 iterations for encryption and MAC.
        public static let `default` = EncodingOptions()

        /// The key-derivation iterations one open of a file written with these options costs.
        public var iterationsPerOpen: Int {
            iterations + (encryptsCertificates ? iterations : 0) + (includesMAC ? macIterations : 0)
        }
    }

    /// Writes an identity as a PKCS#12 file that OpenSSL 3, Java 17+, Python `cryptography` and
    /// Windows 10+ open: key and certificates encrypted with PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC),
    /// integrity protected by an HMAC-SHA256 MAC. ``EncodingOptions`` can leave the certificates in
    /// the clear and the MAC out (what the identity store writes: one key derivation per open).
    ///
    /// - Parameters:
    ///   - identity: the identity; its key must be a ``LocalSigningKey`` (a remote key cannot be exported).
    ///   - password: the new file's password; must not be empty and must not contain NUL bytes.
    ///   - friendlyName: the alias stored with the key and the leaf certificate (UTF-8, may be Cyrillic).
    ///   - options: iteration counts.
    /// - Returns: the DER PKCS#12 bytes.
    /// - Throws: `.unsupportedOperation` for a non-local key, `.invalidParameter` for an empty password
    ///   or bad iteration counts, `.cryptoFailure` when OpenSSL fails.
    public static func encode(
        _ identity: SigningIdentity,
        password: Secret,
        friendlyName: String? = nil,
        options: EncodingOptions = .default
    ) throws -> [UInt8] {
        let key = try checkEncodable(identity, password: password, options: options)
        OpenSSLErrorQueue.clear()
        return try CertificateProviderError.convertingOpenSSLErrors {
            try withX509Stack(identity.chain.map(\.handle)) { chain in
                try password.withCString { pass -> [UInt8] in
                    guard
                        let p12 = PKCS12_create_ex(
                            pass,
                            friendlyName,
                            key.handle.pointer,
                            identity.certificate.handle.pointer,
                            chain,
                            NID_aes_256_cbc,
                            options.encryptsCertificates ? NID_aes_256_cbc : -1,
                            Int32(options.iterations),
                            -1,
                            0,
                            nil,
                            nil
                        )
                    else {
                        throw OpenSSLErrorQueue.error(.cryptoFailure, "OpenSSL could not build the PKCS#12 structure")
                    }
                    defer { PKCS12_free(p12) }
                    guard
                        !options.includesMAC
                            || PKCS12_set_mac(
                                p12,
                                pass,
                                Int32(password.count),
                                nil,
                                0,
                                Int32(options.macIterations),
                                EVP_sha256()
                            ) == 1
                    else {
                        throw OpenSSLErrorQueue.error(.cryptoFailure, "OpenSSL could not add the PKCS#12 MAC")
                    }
                    var output: UnsafeMutablePointer<UInt8>?
                    let length = i2d_PKCS12(p12, &output)
                    guard length > 0, let output else {
                        throw OpenSSLErrorQueue.error(.cryptoFailure, "OpenSSL could not encode the PKCS#12 file")
                    }
                    defer { COpenSSLShims_OPENSSL_free(output) }
                    return Array(UnsafeBufferPointer(start: output, count: Int(length)))
                }
            }
        }
    }

    /// The identity's local key, once the identity, the password and the iteration counts are fit to
    /// be written.
    /// - Throws: as ``encode(_:password:friendlyName:options:)``, before anything is built.
    private static func checkEncodable(
        _ identity: SigningIdentity,
        password: Secret,
        options: EncodingOptions
    ) throws -> LocalSigningKey {
        guard let key = identity.key as? LocalSigningKey else {
            throw CertificateProviderError.unsupportedOperation(
                "only a local (OpenSSL) key can be written to a PKCS#12 file; this identity's key is "
                    + "\(type(of: identity.key))"
            )
        }
        guard !password.isEmpty else {
            throw CertificateProviderError(
                .passwordRequired,
                "a PKCS#12 file written by this package needs a non-empty password (an empty one would leave the key "
                    + "unprotected)"
            )
        }
        guard password.withUnsafeBytes({ !$0.contains(0) }) else {
            throw CertificateProviderError.invalidParameter("the PKCS#12 password must not contain NUL characters")
        }
        // The file gets up to three derivations (key, certificates, MAC); an open refuses more
        // than maximumIterations in total, so the writer keeps to the same total.
        let allowed = 1...PKCS12File.maximumIterations
        guard allowed.contains(options.iterations), !options.includesMAC || allowed.contains(options.macIterations),
            allowed.contains(options.iterationsPerOpen)
        else {
            throw CertificateProviderError.invalidParameter(
                "PKCS#12 iteration counts must be at least 1 and, for the key, the certificates and the MAC together "
                    + "(iterationsPerOpen), at most \(PKCS12File.maximumIterations)"
            )
        }
        guard key.matches(identity.certificate) else {
            throw CertificateProviderError(
                .keyCertificateMismatch,
                "the identity's key does not match its certificate (\(identity.certificate.subject))"
            )
        }
        return key
    }
}
