import CertificateProviders
import CertificateProvidersTesting
import Foundation
import HTTPClient
import RemoteProviderSupport
import TestSupport
import Testing

/// The verifier a kept remote session stores of its login credentials: salted, slow, and matching
/// only the very same credentials.
@Suite struct SessionCredentialVerifierTests {
    static let right: [(name: String, value: Secret?)] = [("password", Secret("123123")), ("clientSecret", nil)]

    @Test("the same credentials match; another password, a given-vs-absent secret or swapped names do not")
    func matching() throws {
        let verifier = try SessionCredentialVerifier(credentials: Self.right, iterations: 1000)
        #expect(verifier.matches(Self.right))
        #expect(verifier.matches([("clientSecret", nil), ("password", Secret("123123"))]), "order does not matter")
        #expect(!verifier.matches([("password", Secret("123124")), ("clientSecret", nil)]))
        #expect(!verifier.matches([("password", Secret("123123")), ("clientSecret", Secret(""))]))
        #expect(!verifier.matches([("password", nil), ("clientSecret", Secret("123123"))]))
        #expect(!verifier.matches([("password", Secret("123123"))]))
    }

    @Test("salted: two verifiers of one password differ; neither holds the password; PBKDF2 as openssl computes it")
    func salted() throws {
        let first = try SessionCredentialVerifier(credentials: Self.right)
        let second = try SessionCredentialVerifier(credentials: Self.right)
        #expect(first.salt != second.salt && first.hash != second.hash)
        #expect(first.iterations == SessionCredentialVerifier.defaultIterations)
        let encoded = String(decoding: try JSONEncoder().encode(first), as: UTF8.self)
        #expect(!encoded.contains("123123") && !encoded.contains(Data("123123".utf8).base64EncodedString()))

        // openssl kdf over the same encoding (name NUL, 1, big-endian length, bytes; sorted by name).
        var message = Array("clientSecret".utf8) + [0, 0]
        message += Array("password".utf8) + [0, 1, 0, 0, 0, 6] + Array("123123".utf8)
        let hex = message.map { String(format: "%02x", $0) }.joined()
        let salt = first.salt.map { String(format: "%02x", $0) }.joined()
        let kdf = try ExternalTool.run(
            "openssl",
            [
                "kdf", "-keylen", "32", "-kdfopt", "digest:SHA256", "-kdfopt", "hexpass:\(hex)", "-kdfopt",
                "hexsalt:\(salt)", "-kdfopt", "iter:\(first.iterations)", "PBKDF2",
            ]
        )
        #expect(kdf.succeeded, "\(kdf.errorOutput)")
        let expected = first.hash.map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(kdf.output.trimmingCharacters(in: .whitespacesAndNewlines) == expected)
    }

    @Test("a stored verifier of another algorithm, a huge iteration count or a short hash matches nothing, at once")
    func plantedVerifiers() throws {
        let verifier = try SessionCredentialVerifier(credentials: Self.right, iterations: 1000)
        var other = verifier
        other.algorithm = "sha256"
        #expect(!other.matches(Self.right))
        var slow = verifier
        slow.iterations = Int(Int32.max)
        let started = Date()
        #expect(!slow.matches(Self.right))
        #expect(Date().timeIntervalSince(started) < 1)
        var short = verifier
        short.hash = short.hash.prefix(16)
        #expect(!short.matches(Self.right))
    }
}
