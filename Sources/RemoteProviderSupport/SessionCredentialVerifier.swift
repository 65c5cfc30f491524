internal import COpenSSL
public import CertificateProviders
public import Foundation

/// What a kept remote session remembers of the credentials it was made with, so that a later call
/// with other credentials logs in afresh instead of riding on the session: a salted PBKDF2-HMAC-SHA256
/// of the credentials (never the credentials, never an unsalted hash), computed through OpenSSL.
///
/// The credentials are named values (`password`, `clientSecret`, …), each present or absent; the
/// verifier matches only the same names with the same values, and absent where absent. A verifier
/// of an unknown algorithm, or with an iteration count outside 1…``maximumIterations`` (a planted
/// file must not make a check hang), matches nothing.
public struct SessionCredentialVerifier: Codable, Sendable, Equatable {
    /// The one algorithm written: PBKDF2 with HMAC-SHA-256.
    public static let pbkdf2SHA256 = "pbkdf2-hmac-sha256"
    /// The iteration count of new verifiers.
    public static let defaultIterations = 100_000
    /// The largest iteration count a stored verifier may ask for.
    public static let maximumIterations = 10_000_000

    /// The algorithm (``pbkdf2SHA256``).
    public var algorithm: String
    /// PBKDF2's iteration count.
    public var iterations: Int
    /// 16 random bytes.
    public var salt: Data
    /// PBKDF2's 32-byte output.
    public var hash: Data

    /// A verifier of `credentials` with a fresh random salt.
    /// - Parameters:
    ///   - credentials: the named values the session was made with (nil: not given).
    ///   - iterations: PBKDF2's iteration count (default ``defaultIterations``).
    /// - Throws: `.cryptoFailure` when OpenSSL cannot draw random bytes or derive the hash.
    public init(credentials: [(name: String, value: Secret?)], iterations: Int = defaultIterations) throws {
        var salt = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&salt, Int32(salt.count)) == 1 else {
            ERR_clear_error()
            throw CertificateProviderError(.cryptoFailure, "cannot draw random bytes for a session verifier")
        }
        guard let hash = SessionCredentialVerifier.derive(credentials, salt: salt, iterations: iterations) else {
            throw CertificateProviderError(.cryptoFailure, "cannot derive a session verifier (PBKDF2)")
        }
        self.algorithm = SessionCredentialVerifier.pbkdf2SHA256
        self.iterations = iterations
        self.salt = Data(salt)
        self.hash = Data(hash)
    }

    /// Whether `credentials` are the ones this verifier was made of (compared in constant time).
    public func matches(_ credentials: [(name: String, value: Secret?)]) -> Bool {
        guard algorithm == SessionCredentialVerifier.pbkdf2SHA256,
            (1...SessionCredentialVerifier.maximumIterations).contains(iterations), salt.count >= 8, hash.count == 32,
            let derived = SessionCredentialVerifier.derive(credentials, salt: Array(salt), iterations: iterations)
        else { return false }
        return hash.withUnsafeBytes { stored in
            derived.withUnsafeBytes { CRYPTO_memcmp(stored.baseAddress, $0.baseAddress, 32) == 0 }
        }
    }

    /// PBKDF2-HMAC-SHA256 over an unambiguous encoding of `credentials` (each name, whether it is
    /// given, its length and its bytes); the encoding is wiped before returning.
    private static func derive(
        _ credentials: [(name: String, value: Secret?)],
        salt: [UInt8],
        iterations: Int
    ) -> [UInt8]? {
        var message: [UInt8] = []
        defer { message.withUnsafeMutableBytes { buffer in _ = buffer.initializeMemory(as: UInt8.self, repeating: 0) } }
        for (name, value) in credentials.sorted(by: { $0.name < $1.name }) {
            message += Array(name.utf8) + [0]
            guard let value else {
                message.append(0)
                continue
            }
            message.append(1)
            withUnsafeBytes(of: UInt32(value.count).bigEndian) { message += $0 }
            value.withUnsafeBytes { message += $0 }
        }
        var output = [UInt8](repeating: 0, count: 32)
        let status = message.withUnsafeBufferPointer { text in
            PKCS5_PBKDF2_HMAC(
                text.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                Int32(text.count),
                salt,
                Int32(salt.count),
                Int32(iterations),
                EVP_sha256(),
                Int32(output.count),
                &output
            )
        }
        guard status == 1 else {
            ERR_clear_error()
            return nil
        }
        return output
    }
}
