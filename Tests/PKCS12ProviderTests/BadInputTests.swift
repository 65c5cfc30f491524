import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import TestSupport
import Testing

/// Damaged and foreign inputs: every one gives a typed error and none crashes.
@Suite("PKCS#12 bad input")
struct BadInputTests {
    /// A small modern file (EC P-256, chain of one) made by our writer with few iterations, so the
    /// hundreds of opens below stay fast; the structure is the same as openssl's default.
    static let fixture: (bytes: [UInt8], identity: SigningIdentity) = {
        // TestPKI and the writer only fail when OpenSSL is broken, which every test would show.
        let identity = try! Fixtures.pki.issueLeaf(subject: "CN=Bad Input Fixture", keyType: .p256)
        let bytes = try! PKCS12File.encode(
            identity,
            password: Secret("fixture"),
            friendlyName: "fixture",
            options: .init(iterations: 16, macIterations: 16)
        )
        return (bytes, identity)
    }()

    @Test("truncated at several offsets → .malformedInput", arguments: [0, 1, 2, 4, 16, 100, 500, -100, -33, -1])
    func truncated(offset: Int) {
        let bytes = Self.fixture.bytes
        let cut = offset >= 0 ? Array(bytes.prefix(offset)) : Array(bytes.dropLast(-offset))
        expectError(.malformedInput) { _ = try PKCS12File(data: cut, password: Secret("fixture")) }
    }

    @Test("single bit flips with the right password: never a wrong-password error, never a different identity")
    func bitFlips() throws {
        try Self.flipBits(in: Self.fixture.bytes, password: "fixture", original: Self.fixture.identity, stride: 3)
    }

    @Test(
        "single bit flips in an openssl -legacy file (RC2-40, 3DES, SHA-1 MAC)",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func bitFlipsLegacy() throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Legacy Flips")
        let bytes = try Fixtures.opensslExport(
            original,
            password: "flip",
            arguments: ["-legacy", "-iter", "16"],
            in: directory
        )
        try Self.flipBits(in: bytes, password: "flip", original: original, stride: 5)
    }

    static func flipBits(in bytes: [UInt8], password: String, original: SigningIdentity, stride step: Int) throws {
        var outcomes: [String: Int] = [:]
        for index in stride(from: 0, to: bytes.count, by: step) {
            var damaged = bytes
            damaged[index] ^= UInt8(1 << (index % 8))
            do {
                let file = try PKCS12File(data: damaged, password: Secret(password))
                if let identity = try? file.identity() {
                    // A flip in a byte nobody checks (e.g. an attribute the MAC does not cover) may be harmless.
                    #expect(identity.certificate == original.certificate, "flip at \(index) changed the certificate")
                    #expect(identity.key.publicKeyDERRepresentation == original.key.publicKeyDERRepresentation)
                }
                outcomes["opened", default: 0] += 1
            } catch let error as CertificateProviderError {
                #expect([.malformedInput, .unsupportedAlgorithm].contains(error.code), "flip at \(index): \(error)")
                outcomes[error.code.rawValue, default: 0] += 1
            }
        }
        #expect((outcomes["malformedInput"] ?? 0) > bytes.count / (2 * step), "\(outcomes)")
    }

    @Test("single bit flips with a wrong password: .wrongPassword or .malformedInput, no crash")
    func bitFlipsWrongPassword() throws {
        let bytes = Self.fixture.bytes
        for index in stride(from: 1, to: bytes.count, by: 11) {
            var damaged = bytes
            damaged[index] ^= 0x10
            expectError(oneOf: [.wrongPassword, .malformedInput, .unsupportedAlgorithm]) {
                _ = try PKCS12File(data: damaged, password: Secret("wrong"))
            }
        }
    }

    @Test("zero bytes, random bytes, text")
    func garbage() {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for input in [[UInt8](repeating: 0, count: 4096), random, [0x30], [0x30, 0x80], Array("hello, world\n".utf8)] {
            expectError(.malformedInput) { _ = try PKCS12File(data: input, password: Secret("x")) }
            expectError(.malformedInput) { _ = try PKCS12File(data: input, password: nil) }
        }
        // Random bytes that start like a DER SEQUENCE.
        for length in [16, 300, 3000] {
            let sequence = [0x30, 0x82, UInt8(length >> 8), UInt8(length & 0xFF)] + random.prefix(length)
            expectError(.malformedInput) { _ = try PKCS12File(data: sequence, password: Secret("x")) }
        }
    }

    @Test("a DER certificate and a PEM file are named as what they are")
    func otherFormats() throws {
        let identity = Self.fixture.identity
        let der = expectError(.malformedInput) {
            _ = try PKCS12File(data: identity.certificate.derRepresentation, password: nil)
        }
        #expect(der?.reason.contains("DER X.509 certificate") == true)
        let key = try #require(identity.key as? LocalSigningKey)
        let pem = identity.certificate.pemRepresentation + (try key.pemRepresentation(password: nil))
        let pemError = expectError(.malformedInput) {
            _ = try PKCS12File(data: Array(pem.utf8), password: nil)
        }
        #expect(pemError?.reason.contains("PEM") == true)
        // What `openssl pkcs12 -nodes` prints: attribute lines before each block.
        let dumped =
            "Bag Attributes\n    localKeyID: 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 10 11 12 13 14\n    friendlyName: signer\n"
            + "subject=CN = Bad Input Fixture\nissuer=CN = PKCS12 Test Root, O = swift-certificate-providers\n" + pem
        let dumpedError = expectError(.malformedInput) {
            _ = try PKCS12File(data: Array(dumped.utf8), password: nil)
        }
        #expect(dumpedError?.reason.contains("PEM") == true)
    }

    @Test("a 50 MB file and 50 MB of bytes → .malformedInput without reading it all")
    func hugeFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("huge.p12")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.write(contentsOf: Data(Self.fixture.bytes))
        try handle.truncate(atOffset: 50 * 1_048_576)  // sparse: 50 MB on the file system, no time to write
        try handle.close()
        let error = expectError(.malformedInput) {
            _ = try PKCS12File(contentsOf: path, password: Secret("fixture"))
        }
        #expect(error?.reason.contains("50 MiB") == true)
        let bytes = Self.fixture.bytes + [UInt8](repeating: 0, count: 50 * 1_048_576)
        expectError(.malformedInput) { _ = try PKCS12File(data: bytes, password: Secret("fixture")) }
    }

    @Test("a hostile iteration count (2^31 - 1) is refused before any key derivation runs")
    func hostileIterationCount() throws {
        var bytes = Self.fixture.bytes
        // The file ends with the MAC iterations `02 01 10` (16) inside MacData, the PFX's last element.
        #expect(Array(bytes.suffix(3)) == [0x02, 0x01, 0x10])
        #expect(bytes[1] == 0x82)  // PFX length in long form, two bytes
        var found: Int?
        // MacData is `30 LL` whose content runs to the end and opens with the DigestInfo and its
        // SHA-256 AlgorithmIdentifier (`30 31 30 0d 06 09`): matching that prefix too keeps a random
        // 0x30 in the digest or salt from being taken for it.
        let digestInfoStart: [UInt8] = [0x30, 0x31, 0x30, 0x0D, 0x06, 0x09]
        for index in stride(from: bytes.count - 3, through: 0, by: -1) where bytes[index] == 0x30 {
            if Int(bytes[index + 1]) == bytes.count - index - 2,
                Array(bytes[(index + 2)..<min(index + 8, bytes.count)]) == digestInfoStart
            {
                found = index
                break
            }
        }
        let macData = try #require(found)
        bytes.removeLast(3)
        bytes += [0x02, 0x04, 0x7F, 0xFF, 0xFF, 0xFF]
        bytes[macData + 1] += 3
        let length = (Int(bytes[2]) << 8 | Int(bytes[3])) + 3
        bytes[2] = UInt8(length >> 8)
        bytes[3] = UInt8(length & 0xFF)
        let error = expectError(.malformedInput) {
            _ = try PKCS12File(data: bytes, password: Secret("fixture"))
        }
        #expect(error?.reason.contains("2147483647") == true, "\(String(describing: error))")
    }

    @Test("missing file and directory → .fileSystem")
    func notAFile() throws {
        let directory = try TemporaryDirectory()
        expectError(.fileSystem) {
            _ = try PKCS12File(contentsOf: directory.path("absent.p12"), password: nil)
        }
        expectError(.fileSystem) { _ = try PKCS12File(contentsOf: directory.url.path, password: nil) }
    }

    @Test("the MAC detects a change even where decryption succeeds (.malformedInput, not .wrongPassword)")
    func modifiedAfterWriting() throws {
        var bytes = Self.fixture.bytes
        // The MAC value is the last OCTET STRING near the end; flip a bit in it.
        bytes[bytes.count - 30] ^= 0x01
        let error = expectError(.malformedInput) {
            _ = try PKCS12File(data: bytes, password: Secret("fixture"))
        }
        #expect(error?.reason.contains("integrity") == true)
        expectError(.wrongPassword) { _ = try PKCS12File(data: bytes, password: Secret("other")) }
    }
}
