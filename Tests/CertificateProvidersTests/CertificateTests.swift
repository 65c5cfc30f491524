import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

@Suite struct CertificateTests {
    /// Makes a self-signed certificate with the real `openssl` CLI and returns (PEM path, DER path).
    private func makeWithOpenSSL(
        _ dir: TemporaryDirectory,
        name: String,
        subject: String,
        keyArgs: [String]
    ) throws -> (pem: String, der: String) {
        let pem = dir.path("\(name).pem")
        let der = dir.path("\(name).der")
        let key = dir.path("\(name).key")
        let made = try ExternalTool.run(
            "openssl",
            [
                "req", "-x509", "-utf8", "-nodes", "-days", "30", "-subj", subject,
                "-keyout", key, "-out", pem,
            ] + keyArgs
        )
        try #require(made.succeeded, "openssl req failed: \(made.errorOutput)")
        let converted = try ExternalTool.run("openssl", ["x509", "-in", pem, "-outform", "DER", "-out", der])
        try #require(converted.succeeded)
        return (pem, der)
    }

    private func opensslField(_ path: String, _ args: [String]) throws -> String {
        try ExternalTool.run("openssl", ["x509", "-in", path, "-noout"] + args).output.trimmingCharacters(
            in: .whitespacesAndNewlines
        )
    }

    @Test func parsesDERAndPEMWithCyrillicSubject() throws {
        let dir = try TemporaryDirectory()
        let files = try makeWithOpenSSL(
            dir,
            name: "rsa",
            subject: "/C=RU/O=ООО Ромашка/CN=Иванов Иван Иванович",
            keyArgs: ["-newkey", "rsa:2048"]
        )
        let fromPEM = try Certificate(
            pemEncoded: String(decoding: try Data(contentsOf: URL(fileURLWithPath: files.pem)), as: UTF8.self)
        )
        let fromDER = try Certificate(derEncoded: Array(try Data(contentsOf: URL(fileURLWithPath: files.der))))
        #expect(fromPEM == fromDER)
        #expect(fromPEM.subject == "CN=Иванов Иван Иванович,O=ООО Ромашка,C=RU")
        #expect(
            fromPEM.subject
                == (try opensslField(files.pem, ["-subject", "-nameopt", "RFC2253,-esc_msb"])).replacingOccurrences(
                    of: "subject=",
                    with: ""
                )
        )
        #expect(fromPEM.issuer == fromPEM.subject)
        #expect(fromPEM.isSelfIssued)
        #expect(fromPEM.subjectAttribute("CN") == "Иванов Иван Иванович")
        // openssl prints whole bytes (a leading 0 when the top byte is below 0x10); ours has no leading zeros.
        let opensslSerial = try opensslField(files.pem, ["-serial"]).replacingOccurrences(of: "serial=", with: "")
        #expect(fromPEM.serialNumber == String(opensslSerial.drop(while: { $0 == "0" })))
        #expect(!fromPEM.serialNumber.hasPrefix("0"))
        let fingerprint = try opensslField(files.pem, ["-fingerprint", "-sha256"])
        #expect(fingerprint.hasSuffix(fromPEM.sha256FingerprintHex))
        #expect(fromPEM.publicKeyAlgorithm == .rsa)
        #expect(fromPEM.publicKeySize == 2048)
        #expect(fromPEM.isValid(at: Date()))
        #expect(!fromPEM.isValid(at: Date().addingTimeInterval(60 * 86_400)))
        #expect(abs(fromPEM.notValidAfter.timeIntervalSince(fromPEM.notValidBefore) - 30 * 86_400) < 2)
        // The PEM we write is read back by openssl.
        let ours = try dir.write("ours.pem", text: fromPEM.pemRepresentation)
        #expect(try opensslField(ours, ["-fingerprint", "-sha256"]) == fingerprint)
    }

    @Test func parsesP384AndBundles() throws {
        let dir = try TemporaryDirectory()
        let ec = try makeWithOpenSSL(
            dir,
            name: "ec",
            subject: "/CN=P-384 signer",
            keyArgs: ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384"]
        )
        let rsa = try makeWithOpenSSL(dir, name: "rsa", subject: "/CN=RSA signer", keyArgs: ["-newkey", "rsa:2048"])
        let ecCertificate = try Certificate(derEncoded: Array(try Data(contentsOf: URL(fileURLWithPath: ec.der))))
        #expect(ecCertificate.publicKeyAlgorithm == .ecP384)
        #expect(ecCertificate.publicKeySize == 384)
        let bundleText =
            try String(contentsOfFile: ec.pem, encoding: .utf8) + "\n"
            + String(contentsOfFile: rsa.pem, encoding: .utf8)
        let bundle = try Certificate.certificates(pemEncoded: bundleText)
        #expect(bundle.map(\.subject) == ["CN=P-384 signer", "CN=RSA signer"])
        #expect(try Certificate.certificates(derOrPEM: Array(bundleText.utf8)).count == 2)
        // A bundle is not one certificate.
        #expect(throws: CertificateProviderError(.malformedInput, "")) { try Certificate(pemEncoded: bundleText) }
    }

    @Test func extensionsOfTestPKICertificates() throws {
        let pki = try TestPKI()
        let leaf = try pki.issueLeaf(subject: "CN=Подписант,O=Тест", keyType: .rsa2048)
        #expect(leaf.certificate.keyUsage?.contains(.digitalSignature) == true)
        #expect(leaf.certificate.keyUsage?.contains(.nonRepudiation) == true)
        #expect(leaf.certificate.keyUsage?.contains(.keyCertSign) == false)
        #expect(leaf.certificate.extendedKeyUsage == [.emailProtection, .clientAuth])
        #expect(leaf.certificate.extendedKeyUsage.map(\.description) == ["emailProtection", "clientAuth"])
        #expect(!leaf.certificate.isCertificateAuthority)
        #expect(pki.root.certificate.isCertificateAuthority)
        #expect(pki.root.certificate.keyUsage?.contains(.keyCertSign) == true)
        #expect(leaf.key.matches(leaf.certificate))
        #expect(!leaf.key.matches(pki.root.certificate))
    }

    @Test(arguments: [
        [UInt8](), [0x30], [0x30, 0x82, 0x05, 0x00], Array("not a certificate".utf8),
        Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8),
    ])
    func garbageIsMalformedInput(bytes: [UInt8]) {
        #expect(throws: CertificateProviderError(.malformedInput, "")) { try Certificate.certificates(derOrPEM: bytes) }
        #expect(throws: CertificateProviderError(.malformedInput, "")) { try Certificate(derEncoded: bytes) }
    }

    @Test func truncatedAndFlippedDERNeverCrash() throws {
        let der = try TestPKI().root.certificate.derRepresentation
        for length in [1, 2, 4, 10, 100, der.count / 2, der.count - 1] {
            #expect(throws: CertificateProviderError(.malformedInput, "")) {
                try Certificate(derEncoded: Array(der.prefix(length)))
            }
        }
        #expect(throws: CertificateProviderError(.malformedInput, "")) { try Certificate(derEncoded: der + [0]) }
        // Flipped bits either still parse (a changed field) or fail as malformedInput; never a crash.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var copy = der
            let index = Int.random(in: 0..<copy.count, using: &generator)
            copy[index] ^= UInt8(1 << Int.random(in: 0..<8, using: &generator))
            do { _ = try Certificate(derEncoded: copy) } catch let error as CertificateProviderError {
                #expect(error.code == .malformedInput || error.code == .unsupportedAlgorithm)
            }
        }
        let truncatedPEM = String(try TestPKI().root.certificate.pemRepresentation.dropLast(40))
        #expect(throws: CertificateProviderError(.malformedInput, "")) { try Certificate(pemEncoded: truncatedPEM) }
    }

    @Test func testPKIChainsVerifyWithOpenSSL() throws {
        let dir = try TemporaryDirectory()
        let pki = try TestPKI(rootSubject: "CN=Корневой УЦ,O=Тест", keyType: .p384)
        let intermediate = try pki.issueIntermediate(subject: "CN=Промежуточный УЦ", keyType: .rsa2048)
        let leaf = try pki.issueLeaf(subject: "CN=Пользователь", keyType: .p256, issuer: intermediate)
        #expect(leaf.chain == [intermediate.certificate, pki.root.certificate])
        let root = try dir.write("root.pem", text: pki.root.certificate.pemRepresentation)
        let inter = try dir.write("inter.pem", text: intermediate.certificate.pemRepresentation)
        let leafPath = try dir.write("leaf.pem", text: leaf.certificate.pemRepresentation)
        let verified = try ExternalTool.run("openssl", ["verify", "-CAfile", root, "-untrusted", inter, leafPath])
        #expect(verified.succeeded, "openssl verify: \(verified.output) \(verified.errorOutput)")
        // Without the intermediate the chain does not verify: the check can fail.
        let broken = try ExternalTool.run("openssl", ["verify", "-CAfile", root, leafPath])
        #expect(!broken.succeeded)
    }
}

@Suite struct TestPKISubjectTests {
    @Test func subjectsReadBackAsWritten() throws {
        let pki = try TestPKI(rootSubject: "CN=Корневой УЦ,O=Тест,C=RU")
        #expect(pki.root.certificate.subject == "CN=Корневой УЦ,O=Тест,C=RU")
        let leaf = try pki.issueLeaf(subject: "CN=Иванов Иван,O=ООО Ромашка,C=RU")
        #expect(leaf.certificate.subject == "CN=Иванов Иван,O=ООО Ромашка,C=RU")
        #expect(leaf.certificate.issuer == pki.root.certificate.subject)
        #expect(leaf.certificate.subjectAttribute("CN") == "Иванов Иван")
    }
}
