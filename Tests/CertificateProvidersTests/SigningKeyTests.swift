import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

@Suite struct SigningKeyTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let key: LocalSigningKey.GenerationParameters
        let scheme: SignatureScheme
        let digest: DigestAlgorithm
        var testDescription: String { "\(key) \(scheme) \(digest)" }
    }

    static let cases: [Case] = [
        Case(key: .rsa2048, scheme: .rsaPKCS1v15, digest: .sha256),
        Case(key: .rsa2048, scheme: .rsaPKCS1v15, digest: .sha512),
        Case(key: .rsa2048, scheme: .rsaPSS, digest: .sha256),
        Case(key: .rsa2048, scheme: .rsaPSS, digest: .sha384),
        Case(key: .p256, scheme: .ecdsa, digest: .sha256),
        Case(key: .p384, scheme: .ecdsa, digest: .sha384),
    ]

    /// Signs with our code, verifies with `openssl dgst -verify` on the produced bytes.
    @Test(arguments: cases)
    func signaturesVerifyWithOpenSSL(_ testCase: Case) async throws {
        let dir = try TemporaryDirectory()
        let key = try LocalSigningKey(generating: testCase.key)
        let data = Array("Документ для подписи, \(testCase.testDescription)".utf8)
        let fromData = try await key.signature(for: data, digestAlgorithm: testCase.digest, scheme: testCase.scheme)
        let fromDigest = try await key.signature(
            forDigest: testCase.digest.hash(data),
            digestAlgorithm: testCase.digest,
            scheme: testCase.scheme
        )
        let publicKey = try dir.write("pub.pem", text: key.publicKeyPEMRepresentation)
        let document = try dir.write("doc.txt", data)
        var pssOptions: [String] = []
        if testCase.scheme == .rsaPSS {
            pssOptions = ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest"]
        }
        for (name, signature) in [("data", fromData), ("digest", fromDigest)] {
            let signaturePath = try dir.write("\(name).sig", signature)
            let result = try ExternalTool.run(
                "openssl",
                ["dgst", "-\(testCase.digest.rawValue)", "-verify", publicKey] + pssOptions
                    + ["-signature", signaturePath, document]
            )
            #expect(result.succeeded, "\(name) signature rejected by openssl: \(result.output) \(result.errorOutput)")
            #expect(
                key.isValidSignature(signature, for: data, digestAlgorithm: testCase.digest, scheme: testCase.scheme)
            )
        }
        // PKCS#1 v1.5 is deterministic: digest signing wraps the DigestInfo exactly as data signing does.
        if testCase.scheme == .rsaPKCS1v15 { #expect(fromData == fromDigest) }
        // A changed document does not verify: the check can fail.
        let tampered = try dir.write("tampered.txt", data + [0x21])
        let rejected = try ExternalTool.run(
            "openssl",
            ["dgst", "-\(testCase.digest.rawValue)", "-verify", publicKey] + pssOptions
                + ["-signature", dir.path("data.sig"), tampered]
        )
        #expect(!rejected.succeeded)
    }

    @Test func rejectsMismatchedSchemesAndDigests() async throws {
        let ec = try LocalSigningKey(generating: .p256)
        await #expect(throws: CertificateProviderError(.unsupportedAlgorithm, "")) {
            try await ec.signature(for: [1, 2, 3], digestAlgorithm: .sha256, scheme: .rsaPSS)
        }
        await #expect(throws: CertificateProviderError(.invalidParameter, "")) {
            try await ec.signature(forDigest: [1, 2, 3], digestAlgorithm: .sha256, scheme: .ecdsa)
        }
        #expect(throws: CertificateProviderError(.unsupportedAlgorithm, "")) {
            try LocalSigningKey(generating: .rsa(bits: 1024))
        }
    }

    @Test func readsKeysWrittenByOpenSSL() throws {
        let dir = try TemporaryDirectory()
        let plain = dir.path("plain.pem")
        let encrypted = dir.path("enc.pem")
        try #require(
            try ExternalTool.run(
                "openssl",
                ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", plain]
            ).succeeded
        )
        try #require(
            try ExternalTool.run(
                "openssl",
                ["pkcs8", "-topk8", "-in", plain, "-out", encrypted, "-passout", "env:KEYPASS"],
                environment: ["KEYPASS": "пароль"]
            ).succeeded
        )
        let key = try LocalSigningKey(pemEncoded: try String(contentsOfFile: plain, encoding: .utf8))
        #expect(key.publicKeyAlgorithm == .ecP384)
        let encryptedPEM = try String(contentsOfFile: encrypted, encoding: .utf8)
        let decrypted = try LocalSigningKey(pemEncoded: encryptedPEM, password: Secret("пароль"))
        #expect(decrypted.publicKeyDERRepresentation == key.publicKeyDERRepresentation)
        #expect(throws: CertificateProviderError(.wrongPassword, "")) {
            try LocalSigningKey(pemEncoded: encryptedPEM, password: Secret("wrong"))
        }
        #expect(throws: CertificateProviderError(.passwordRequired, "")) {
            try LocalSigningKey(pemEncoded: encryptedPEM)
        }
        #expect(throws: CertificateProviderError(.malformedInput, "")) { try LocalSigningKey(pemEncoded: "garbage") }
        // Our encrypted export opens with openssl.
        let exported = try dir.write("exported.pem", text: try key.pemRepresentation(password: Secret("экспорт")))
        let opened = try ExternalTool.run(
            "openssl",
            ["pkey", "-in", exported, "-passin", "env:P", "-noout"],
            environment: ["P": "экспорт"]
        )
        #expect(opened.succeeded, "\(opened.errorOutput)")
    }

    @Test func digestsMatchOpenSSL() throws {
        let dir = try TemporaryDirectory()
        let data = [UInt8](repeating: 0x61, count: 100_000)
        let path = try dir.write("data.bin", data)
        for digest in DigestAlgorithm.allSupported {
            // Streebog is computed by the gost engine on both sides (GOSTTests covers it without the file).
            let name =
                digest.isGOST
                ? ["-engine", "gost", "-md_gost12_\(digest.outputByteCount * 8)"] : ["-\(digest.rawValue)"]
            let theirs = try ExternalTool.run("openssl", ["dgst"] + name + ["-r", path]).output.split(separator: " ")
                .first.map(String.init)
            let ours = digest.hash(data).map { String(format: "%02x", $0) }.joined()
            #expect(ours == theirs)
            var hasher = DigestAlgorithm.Hasher(digest)
            hasher.update(Array(data[..<40_000]))
            hasher.update(Array(data[40_000...]))
            #expect(hasher.finalize() == digest.hash(data))
        }
        #expect(DigestAlgorithm(name: "SHA-384") == .sha384)
        #expect(DigestAlgorithm(name: "md5") == nil)
    }
}

@Suite struct PublicInterfaceTests {
    /// C modules are imported `internal`, so the compiler itself rejects any OpenSSL type in a public
    /// signature; this guards against someone turning an import public.
    @Test func noCModuleIsImportedPublicly() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var offenders: [String] = []
        for folder in ["Sources", "Providers"] {
            guard let walker = FileManager.default.enumerator(atPath: root.appendingPathComponent(folder).path) else {
                continue
            }
            for case let file as String in walker where file.hasSuffix(".swift") {
                let text = try String(
                    contentsOfFile: root.appendingPathComponent(folder).appendingPathComponent(file).path,
                    encoding: .utf8
                )
                for line in text.split(separator: "\n") {
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    if trimmed.range(
                        of: #"^(public |@_exported |package )?import (COpenSSL|CSQLite|CMicroHTTPD)"#,
                        options: .regularExpression
                    ) != nil,
                        !trimmed.hasPrefix("internal import")
                    {
                        offenders.append("\(folder)/\(file): \(trimmed)")
                    }
                }
            }
        }
        #expect(offenders.isEmpty, "C modules must be imported with `internal import`: \(offenders)")
    }
}
