import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// GOST R 34.10-2012 keys and GOST R 34.11-2012 (Streebog) digests in the core, checked against
/// `openssl -engine gost`.
@Suite(.enabled(if: GOSTEngine.isAvailable && ExternalTool.isAvailable("openssl"), "needs libengine-gost-openssl"))
struct GOSTTests {
    @discardableResult
    static func openssl(_ arguments: [String], input: Data? = nil) throws -> ExternalTool.Result {
        try ExternalTool.run("openssl", arguments, input: input).requireSuccess()
    }

    @Test(arguments: [(DigestAlgorithm.streebog256, "md_gost12_256"), (.streebog512, "md_gost12_512")])
    func streebogMatchesOpenSSL(algorithm: DigestAlgorithm, opensslName: String) throws {
        let data = Array("Съешь же ещё этих мягких французских булок".utf8)
        let expected = try Self.openssl(["dgst", "-engine", "gost", "-\(opensslName)", "-r"], input: Data(data)).output
            .split(separator: " ").first.map(String.init)
        let ours = algorithm.hash(data).map { String(format: "%02x", $0) }.joined()
        #expect(ours == expected)
        #expect(algorithm.hash(data).count == algorithm.outputByteCount)
        // Streamed in pieces gives the same digest.
        var hasher = DigestAlgorithm.Hasher(algorithm)
        hasher.update(Array(data.prefix(7)))
        hasher.update(Array(data.dropFirst(7)))
        #expect(hasher.finalize() == algorithm.hash(data))
        try algorithm.checkAvailable()
    }

    @Test func digestNamesAndTheRuleForKeys() throws {
        #expect(DigestAlgorithm(name: "streebog256") == .streebog256)
        #expect(DigestAlgorithm(name: "Streebog-512") == .streebog512)
        #expect(DigestAlgorithm(name: "md_gost12_256") == .streebog256)
        #expect(DigestAlgorithm(name: "1.2.643.7.1.1.2.3") == .streebog512)
        #expect(DigestAlgorithm(name: "GOST R 34.11-2012 256") == .streebog256)
        #expect(DigestAlgorithm(name: "streebog1024") == nil)
        #expect(DigestAlgorithm.streebog256.displayName == "GOST R 34.11-2012 256")
        #expect(DigestAlgorithm.streebog256.isGOST && !DigestAlgorithm.sha256.isGOST)
        #expect(try DigestAlgorithm.preferred(for: .gostR34102012(bits: 256, parameterSet: "x")) == .streebog256)
        #expect(try DigestAlgorithm.preferred(for: .gostR34102012(bits: 512, parameterSet: nil)) == .streebog512)
        #expect(try DigestAlgorithm.preferred(for: .rsa) == .sha256)
        #expect(try DigestAlgorithm.preferred(for: .ecP384) == .sha256)
        #expect(throws: CertificateProviderError(.unsupportedAlgorithm, "")) {
            try DigestAlgorithm.preferred(for: .gostR34102012(bits: 1024, parameterSet: nil))
        }
    }

    @Test(arguments: [
        (LocalSigningKey.GenerationParameters.gost256, 256, "id-GostR3410-2001-CryptoPro-A-ParamSet"),
        (.gost256(parameterSet: "TCB"), 256, "id-tc26-gost-3410-2012-256-paramSetB"),
        (.gost512, 512, "id-tc26-gost-3410-2012-512-paramSetA"),
        (.gost512(parameterSet: "B"), 512, "id-tc26-gost-3410-2012-512-paramSetB"),
    ])
    func generatedKeysSignDigestsOpenSSLVerifies(
        parameters: LocalSigningKey.GenerationParameters,
        bits: Int,
        parameterSet: String
    ) async throws {
        let key = try LocalSigningKey(generating: parameters)
        #expect(key.publicKeyAlgorithm.isGOST)
        #expect(key.publicKeyAlgorithm.gostKeySize == bits)
        #expect(key.publicKeyAlgorithm.gostParameterSet == parameterSet)
        #expect(key.publicKeyAlgorithm.family == "GOST R 34.10-2012 \(bits)")
        #expect(key.keySize == bits)
        #expect(key.defaultScheme == .gostR34102012)
        let digestAlgorithm = try DigestAlgorithm.preferred(for: key.publicKeyAlgorithm)
        let data = Array("документ \(bits)".utf8)
        let signature = try await key.signature(for: data, digestAlgorithm: digestAlgorithm, scheme: .gostR34102012)
        #expect(signature.count == bits / 4, "a raw GOST signature is r || s, \(bits / 4) bytes")
        #expect(key.isValidSignature(signature, for: data, digestAlgorithm: digestAlgorithm, scheme: .gostR34102012))
        #expect(
            !key.isValidSignature(signature, for: data + [0], digestAlgorithm: digestAlgorithm, scheme: .gostR34102012)
        )

        // openssl pkeyutl with the engine checks the same signature over the same digest.
        let directory = try TemporaryDirectory(prefix: "gost-key")
        let publicKey = try directory.write("pub.pem", text: key.publicKeyPEMRepresentation)
        let digest = try directory.write("digest.bin", digestAlgorithm.hash(data))
        let signatureFile = try directory.write("sig.bin", signature)
        let checked = try ExternalTool.run(
            "openssl",
            [
                "pkeyutl", "-engine", "gost", "-verify", "-pubin", "-inkey", publicKey,
                "-in", digest, "-sigfile", signatureFile,
            ]
        )
        #expect(checked.succeeded, "\(checked.errorOutput)")

        // The PEM round trip keeps the key; an encrypted PEM is read back with its password.
        let pem = try key.pemRepresentation(password: Secret("pw"))
        let reread = try LocalSigningKey(pemEncoded: pem, password: Secret("pw"))
        #expect(reread.publicKeyDERRepresentation == key.publicKeyDERRepresentation)
        #expect(reread.publicKeyAlgorithm == key.publicKeyAlgorithm)
    }

    @Test func aGOSTKeyRefusesDigestsAndSchemesThatDoNotFit() async throws {
        let key = try LocalSigningKey(generating: .gost256)
        let data = Array("x".utf8)
        await #expect(throws: CertificateProviderError(.unsupportedAlgorithm, "")) {
            try await key.signature(for: data, digestAlgorithm: .sha256, scheme: .gostR34102012)
        }
        await #expect(throws: CertificateProviderError(.unsupportedAlgorithm, "")) {
            try await key.signature(for: data, digestAlgorithm: .streebog512, scheme: .gostR34102012)
        }
        await #expect(throws: CertificateProviderError(.unsupportedAlgorithm, "")) {
            try await key.signature(for: data, digestAlgorithm: .streebog256, scheme: .ecdsa)
        }
        let ec = try LocalSigningKey(generating: .p256)
        await #expect(throws: CertificateProviderError(.unsupportedAlgorithm, "")) {
            try await ec.signature(for: data, digestAlgorithm: .streebog256, scheme: .ecdsa)
        }
        #expect(throws: CertificateProviderError(.unsupportedAlgorithm, "")) {
            try LocalSigningKey(generating: .gost512(parameterSet: "Z"))
        }
    }

    @Test func certificatesShowGOSTKeysAndParameterSets() throws {
        let directory = try TemporaryDirectory(prefix: "gost-cert")
        for (algorithm, paramset, md, expected) in [
            ("gost2012_256", "TCA", "md_gost12_256", "GOST R 34.10-2012 256 (id-tc26-gost-3410-2012-256-paramSetA)"),
            ("gost2012_512", "C", "md_gost12_512", "GOST R 34.10-2012 512 (id-tc26-gost-3410-2012-512-paramSetC)"),
        ] {
            let key = directory.path("\(algorithm).key")
            let certificate = directory.path("\(algorithm).pem")
            try Self.openssl([
                "genpkey", "-engine", "gost", "-algorithm", algorithm, "-pkeyopt", "paramset:\(paramset)", "-out", key,
            ])
            try Self.openssl([
                "req", "-engine", "gost", "-new", "-x509", "-\(md)", "-key", key, "-subj", "/CN=Сертификат ГОСТ",
                "-days", "10", "-out", certificate, "-utf8",
            ])
            let parsed = try Certificate(
                pemEncoded: String(decoding: try directory.read("\(algorithm).pem"), as: UTF8.self)
            )
            #expect(parsed.publicKeyAlgorithm.rawValue == expected)
            #expect(parsed.publicKeySize == (algorithm.hasSuffix("512") ? 512 : 256))
            #expect(parsed.subject == "CN=Сертификат ГОСТ")
            // The DER form parses the same.
            let der = try Certificate(derEncoded: parsed.derRepresentation)
            #expect(der.publicKeyAlgorithm == parsed.publicKeyAlgorithm)
        }
    }

    @Test func testPKIIssuesUnderAGOSTCertificateAuthority() throws {
        let pki = try TestPKI(rootSubject: "CN=ГОСТ Root,O=certsign", keyType: .gost512)
        let leaf = try pki.issueLeaf(subject: "CN=ГОСТ Leaf", keyType: .gost256)
        #expect(leaf.certificate.publicKeyAlgorithm.gostKeySize == 256)
        let directory = try TemporaryDirectory(prefix: "gost-pki")
        let root = try directory.write("root.pem", text: pki.root.certificate.pemRepresentation)
        let certificate = try directory.write("leaf.pem", text: leaf.certificate.pemRepresentation)
        let verified = try ExternalTool.run("openssl", ["verify", "-engine", "gost", "-CAfile", root, certificate])
        #expect(verified.succeeded, "\(verified.output) \(verified.errorOutput)")
        let text = try Self.openssl(["x509", "-engine", "gost", "-in", certificate, "-noout", "-text"]).output
        #expect(
            text.contains("GOST R 34.10-2012 with GOST R 34.11-2012 (512 bit)"),
            "a 512-bit issuer signs with Streebog-512"
        )
    }
}
