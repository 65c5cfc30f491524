import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import TestSupport
import Testing

/// The identity store's entry format: one key derivation per unlock (key bag PBES2 at 600 000
/// iterations, certificates in the clear, no MAC), entries of the older format still open, and
/// altered entries are refused with a typed error.
@Suite("PKCS#12 store entry format")
struct StoreEntryFormatTests {
    static let password = "pw-store-формат"

    /// An entry written with the store's own encoding (600 000 iterations).
    static func storeWithEntry(
        _ directory: TemporaryDirectory,
        keyType: LocalSigningKey.GenerationParameters = .p256
    ) throws -> (PKCS12IdentityStore, SigningIdentity) {
        let store = PKCS12IdentityStore(directory: directory.url.appendingPathComponent("store"))
        let identity = try Fixtures.pki.issueLeaf(subject: "CN=Entry Format", keyType: keyType)
        try store.import(identity, alias: "entry", storePassword: Secret(password))
        return (store, identity)
    }

    static func entryPath(_ store: PKCS12IdentityStore) -> String {
        store.directory.appendingPathComponent("identities/entry/identity.p12").path
    }

    @Test("a new entry costs one key derivation: key bag PBES2 600 000, certificates in the clear, no MAC")
    func oneDerivation() throws {
        let directory = try TemporaryDirectory()
        let (store, identity) = try Self.storeWithEntry(directory)
        let file = try PKCS12File(
            data: try #require(try store.pkcs12Data(alias: "entry")),
            password: Secret(Self.password)
        )
        #expect(file.protection.plaintextKeyCount == 0)
        #expect(file.protection.keyEncryption.count == 1)
        let keyBag = try #require(file.protection.keyEncryption.first)
        #expect(keyBag.name == "PBES2")
        #expect(keyBag.cipher == "AES-256-CBC")
        #expect(keyBag.pseudoRandomFunction == "hmacWithSHA256")
        #expect(keyBag.iterations == 600_000)
        #expect(file.protection.contentEncryption.isEmpty)
        #expect(file.protection.macAlgorithm == nil)
        #expect(file.protection.macIterations == nil)
        #expect(PKCS12IdentityStore.entryEncoding.iterationsPerOpen == 600_000)
        #expect(file.certificates.contains(identity.certificate))
        let unlocked = try store.identity(alias: "entry", password: Secret(Self.password))
        #expect(unlocked.certificate == identity.certificate)
    }

    @Test(
        "OpenSSL reads a new entry with the password and sees one PBES2 key bag, a plain certificate bag, no MAC",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func opensslView() throws {
        let directory = try TemporaryDirectory()
        let (store, identity) = try Self.storeWithEntry(directory)
        let environment = ["P12PASS": Self.password]
        let info = try Fixtures.run(
            "openssl",
            ["pkcs12", "-in", Self.entryPath(store), "-info", "-noout", "-passin", "env:P12PASS"],
            environment: environment
        )
        // `-info` writes the structure to stderr (OpenSSL 3 needs no -nomacver: it warns "MAC is absent").
        let text = info.output + info.errorOutput
        #expect(text.contains("Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC, Iteration 600000, PRF hmacWithSHA256"))
        #expect(text.contains("PKCS7 Data"))
        #expect(!text.contains("PKCS7 Encrypted data"), "\(text)")
        #expect(!text.contains("MAC: sha256"), "\(text)")
        #expect(text.contains("Certificate bag"))
        // The key OpenSSL decrypts is the identity's key: it signs what the certificate verifies.
        let pem = try Fixtures.run(
            "openssl",
            ["pkcs12", "-in", Self.entryPath(store), "-nodes", "-nocerts", "-passin", "env:P12PASS"],
            environment: environment
        )
        try directory.write("key.pem", text: pem.output)
        try directory.write("cert.pem", text: identity.certificate.pemRepresentation)
        try directory.write("document.txt", text: "подписываемый документ")
        try Fixtures.run(
            "openssl",
            [
                "dgst", "-sha256", "-sign", directory.path("key.pem"), "-out", directory.path("document.sig"),
                directory.path("document.txt"),
            ]
        )
        try Fixtures.run(
            "openssl",
            ["x509", "-in", directory.path("cert.pem"), "-pubkey", "-noout", "-out", directory.path("pub.pem")]
        )
        let verified = try Fixtures.run(
            "openssl",
            [
                "dgst", "-sha256", "-verify", directory.path("pub.pem"), "-signature", directory.path("document.sig"),
                directory.path("document.txt"),
            ]
        )
        #expect(verified.output.contains("Verified OK"))
        // A wrong password does not decrypt the key in OpenSSL either.
        let wrong = try ExternalTool.run(
            "openssl",
            ["pkcs12", "-in", Self.entryPath(store), "-nodes", "-nocerts", "-passin", "env:P12PASS"],
            environment: ["P12PASS": "not-the-password"]
        )
        #expect(!wrong.output.contains("PRIVATE KEY"))
    }

    @Test("an entry of the older format (certificates encrypted, SHA-256 MAC, 600 000 each) still opens")
    func oldFormatOpens() throws {
        let directory = try TemporaryDirectory()
        let store = PKCS12IdentityStore(directory: directory.url)
        let identity = try Fixtures.pki.issueLeaf(subject: "CN=Old Format", keyType: .p256)
        // What `entryEncoding` was before the one-derivation format.
        let old = PKCS12File.EncodingOptions(iterations: 600_000, macIterations: 600_000)
        try store.import(identity, alias: "old", storePassword: Secret(Self.password), options: old)
        let bytes = try #require(try store.pkcs12Data(alias: "old"))
        let file = try PKCS12File(data: bytes, password: Secret(Self.password))
        #expect(file.protection.macAlgorithm?.name == "sha256")
        #expect(file.protection.macIterations == 600_000)
        #expect(file.protection.contentEncryption.map(\.iterations) == [600_000])
        let unlocked = try store.identity(alias: "old", password: Secret(Self.password))
        #expect(unlocked.certificate == identity.certificate)
        expectError(.wrongPassword) { _ = try store.identity(alias: "old", password: Secret("wrong-password")) }
    }

    @Test("a wrong password gives .wrongPassword; none gives .passwordRequired")
    func wrongPassword() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try Self.storeWithEntry(directory)
        expectError(.wrongPassword) { _ = try store.identity(alias: "entry", password: Secret("wrong-password")) }
        expectError(.wrongPassword) { _ = try store.identity(alias: "entry", password: Secret("пароль-неверный")) }
        expectError(.passwordRequired) { _ = try store.identity(alias: "entry", password: nil) }
    }

    @Test("a changed public key in the clear certificate bag is refused as .storeCorrupted")
    func tamperedCertificate() throws {
        let directory = try TemporaryDirectory()
        let (store, identity) = try Self.storeWithEntry(directory)
        var bytes = try #require(try store.pkcs12Data(alias: "entry"))
        let certificate = identity.certificate.derRepresentation
        let start = try #require(Self.find(certificate, in: bytes), "the certificate is stored in the clear")
        // The uncompressed P-256 point of the certificate's SubjectPublicKeyInfo (BIT STRING 03 42 00 04).
        let point = try #require(Self.find([0x03, 0x42, 0x00, 0x04], in: certificate))
        bytes[start + point + 20] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: Self.entryPath(store)))
        expectError(.storeCorrupted) { _ = try store.identity(alias: "entry", password: Secret(Self.password)) }
    }

    @Test("changed key ciphertext is refused with a typed error, never unlocked")
    func tamperedKey() throws {
        let directory = try TemporaryDirectory()
        let (store, identity) = try Self.storeWithEntry(directory)
        let original = try #require(try store.pkcs12Data(alias: "entry"))
        // The shrouded key bag (its OID), then PBES2 parameters, then the key's ciphertext. Flip
        // bytes at several places of the ciphertext, each in a fresh copy.
        let keyBag = try #require(
            Self.find([0x06, 0x0B, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x0C, 0x0A, 0x01, 0x02], in: original)
        )
        #expect(Self.find(identity.certificate.derRepresentation, in: original) != nil)
        // OID (13), [0] (3), EncryptedPrivateKeyInfo (3), PBES2 AlgorithmIdentifier (90), then
        // OCTET STRING of 144 bytes: the ciphertext spans offsets 112..<256.
        #expect(Array(original[keyBag + 109..<keyBag + 112]) == [0x04, 0x81, 0x90])
        for offset in [180, 200, 240] {
            var bytes = original
            bytes[keyBag + offset] ^= 0x5A
            try Data(bytes).write(to: URL(fileURLWithPath: Self.entryPath(store)))
            expectError(oneOf: [.wrongPassword, .storeCorrupted]) {
                _ = try store.identity(alias: "entry", password: Secret(Self.password))
            }
        }
    }

    @Test(
        "an entry replaced by a file whose key is not encrypted is refused as .storeCorrupted",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func plaintextKeyRefused() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try Self.storeWithEntry(directory)
        let intruder = try Fixtures.pki.issueLeaf(subject: "CN=Intruder", keyType: .p256)
        let bytes = try Fixtures.opensslExport(
            intruder,
            password: Self.password,
            arguments: ["-keypbe", "NONE", "-certpbe", "NONE", "-nomac"],
            in: directory
        )
        // The file itself opens: it is a valid PKCS#12 with its key in the clear.
        #expect(try PKCS12File(data: bytes, password: Secret("anything")).protection.plaintextKeyCount == 1)
        try Data(bytes).write(to: URL(fileURLWithPath: Self.entryPath(store)))
        let error = expectError(.storeCorrupted) {
            _ = try store.identity(alias: "entry", password: Secret("any-password"))
        }
        #expect(error?.reason.contains("not encrypted") == true)
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if Array(haystack[index..<index + needle.count]) == needle { return index }
        }
        return nil
    }
}
