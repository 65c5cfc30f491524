import CertificateProviders

/// How the login this process holds on a token was made: a salted SHA-256 of the PIN that made it,
/// or "on the token's PIN pad". Never the PIN itself.
///
/// PKCS#11 keeps the login state per application and token, not per session: once one connection
/// of this process has logged in, every session of the process on that token is logged in, and a
/// second `C_Login` answers `CKR_USER_ALREADY_LOGGED_IN` without looking at the PIN (SoftHSM,
/// OpenSC). So a second provider cannot prove its PIN through the token while the first one's
/// login lasts; it proves it against this verifier instead (see ``PKCS11TokenConnection``).
///
/// The salt is random per login and the digest is compared in constant time. A fast hash is enough:
/// the verifier lives only in this process's memory, beside the connections that hold the PIN itself.
struct PKCS11LoginVerifier: Sendable {
    private enum Kind: Sendable {
        case pin(salt: [UInt8], digest: [UInt8])
        case protectedAuthenticationPath
    }
    private let kind: Kind

    /// A login made with `pin`.
    init(pin: Secret) {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        kind = .pin(salt: salt, digest: Self.digest(of: pin, salt: salt))
    }

    private init(kind: Kind) { self.kind = kind }

    /// A login the user made on the token's own PIN pad or reader (`CKF_PROTECTED_AUTHENTICATION_PATH`).
    static let protectedAuthenticationPath = PKCS11LoginVerifier(kind: .protectedAuthenticationPath)

    /// Whether the login was made on the PIN pad (no PIN can be compared with it).
    var madeOnPINPad: Bool {
        if case .protectedAuthenticationPath = kind { return true }
        return false
    }

    /// Whether `pin` is the PIN the login was made with (false for a PIN-pad login).
    func matches(_ pin: Secret) -> Bool {
        guard case .pin(let salt, let expected) = kind else { return false }
        let actual = Self.digest(of: pin, salt: salt)
        guard actual.count == expected.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(actual, expected) { difference |= left ^ right }
        return difference == 0
    }

    /// SHA-256(salt ‖ PIN), hashing straight from the secret's buffer.
    private static func digest(of pin: Secret, salt: [UInt8]) -> [UInt8] {
        var hasher = DigestAlgorithm.Hasher(.sha256)
        hasher.update(salt)
        pin.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }
}
