import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// The README's whole path against a real OpenBao: a key made by `bao write transit/keys/…`,
/// `certsign csr`, `openssl x509 -req`, `certsign sign --param certificate=…`, judged by openssl and
/// pyHanko.
@Suite("vault-transit: certsign csr, a CA, certsign sign (CAdES and PAdES) against bao server -dev")
struct VaultTransitCLITests {
    struct Case: Sendable, CustomTestStringConvertible {
        let key: String
        let scheme: String?
        var testDescription: String { "\(key)\(scheme.map { " \($0)" } ?? "")" }
    }

    @Test(
        "csr verifies and carries the server's key; CAdES and PAdES verify in openssl and pyHanko",
        .enabled(if: CLI.isBuilt),
        arguments: [
            Case(key: "ec", scheme: nil), Case(key: "rsa", scheme: "rsa-pkcs1v15"), Case(key: "rsa", scheme: "rsa-pss"),
        ]
    )
    func readmePath(_ testCase: Case) async throws {
        try await withBao { bao in
            let store = try TemporaryDirectory()
            let work = try TemporaryDirectory()
            let environment = ["VAULT_TOKEN": bao.token]
            let csrPath = work.path("\(testCase.key).csr")
            let csr = try CLI.run(
                ["csr"] + vaultArguments(bao.url, key: testCase.key) + [
                    "--subject", "CN=Иван Петров,O=ООО Ромашка,C=RU", "--san", "email:ivan@example.ru", "--out",
                    csrPath,
                ],
                store: store,
                environment: environment
            )
            #expect(csr.succeeded, "\(csr.errorOutput)")
            try expectNoSecret(bao.token, in: csr, store: store)
            let verified = try ExternalTool.run("openssl", ["req", "-in", csrPath, "-verify", "-noout"])
            #expect(verified.succeeded && verified.errorOutput.contains("verify OK"), "\(verified.errorOutput)")
            #expect(try opensslPublicKey(ofRequest: csrPath) == (try bao.publicKeyPEM(testCase.key)))
            let parsed = try ExternalTool.run("openssl", ["asn1parse", "-in", csrPath])
            #expect(parsed.output.contains("UTF8STRING") && parsed.output.contains("Иван Петров"), "\(parsed.output)")
            let ca = try OpenSSLTestCA(in: work)
            let certificate = try ca.issue(csrPath, as: "\(testCase.key).pem")
            var extra = ["certificate": certificate]
            if let scheme = testCase.scheme { extra["scheme"] = scheme }

            let document = try work.write("счёт.txt", text: "Счёт № 2026-001\n")
            let cades = try CLI.run(
                ["sign", document, "--out", work.path("счёт.p7s")]
                    + vaultArguments(bao.url, key: testCase.key, extra: extra),
                store: store,
                environment: environment
            )
            #expect(cades.succeeded, "\(cades.errorOutput)")
            try expectNoSecret(bao.token, in: cades, store: store)
            let cms = try OpenSSLCMS.verify(
                signatureFile: work.path("счёт.p7s"),
                contentFile: document,
                caFile: ca.certificatePath,
                cades: true
            )
            #expect(cms.succeeded, "openssl cms -verify: \(cms.errorOutput)")
            let printed = try ExternalTool.run(
                "openssl",
                ["cms", "-cmsout", "-print", "-inform", "DER", "-in", work.path("счёт.p7s")]
            )
            #expect(
                printed.output.contains("rsassaPss") == (testCase.scheme == "rsa-pss"),
                "the SignerInfo's algorithm"
            )

            let pdf = try work.write("договор.pdf", TestPDF.minimal())
            let pades = try CLI.run(
                ["sign", pdf, "--format", "pades", "--out", work.path("signed.pdf")]
                    + vaultArguments(bao.url, key: testCase.key, extra: extra),
                store: store,
                environment: environment
            )
            #expect(pades.succeeded, "\(pades.errorOutput)")
            let judged = try PyHankoValidator.validate(work.path("signed.pdf"), root: try ca.certificate, in: work)
            #expect(judged.count == 1 && judged.first?.contains("INTACT:TRUSTED") == true, "\(judged)")
            try expectNoSecret(bao.token, in: pades, store: store)
        }
    }

    @Test("40 documents in one certsign sign: batch requests in flight, every .p7s verifies", .enabled(if: CLI.isBuilt))
    func batch() async throws {
        try await withBao { bao in
            let store = try TemporaryDirectory()
            let work = try TemporaryDirectory()
            let environment = ["VAULT_TOKEN": bao.token]
            let csrPath = work.path("ec.csr")
            let csr = try CLI.run(
                ["csr"] + vaultArguments(bao.url, key: "ec") + ["--subject", "CN=Batch Signer", "--out", csrPath],
                store: store,
                environment: environment
            )
            try #require(csr.succeeded, "\(csr.errorOutput)")
            let ca = try OpenSSLTestCA(in: work)
            let certificate = try ca.issue(csrPath, as: "ec.pem")
            let documents = try (1...40).map { try work.write("doc-\($0).txt", text: "документ \($0)\n") }
            let signed = try CLI.run(
                ["sign"] + documents + ["--out-dir", work.path("out")]
                    + vaultArguments(bao.url, key: "ec", extra: ["certificate": certificate]),
                store: store,
                environment: environment
            )
            #expect(signed.succeeded, "\(signed.errorOutput)")
            for (index, document) in documents.enumerated() {
                let result = try OpenSSLCMS.verify(
                    signatureFile: work.path("out/doc-\(index + 1).txt.p7s"),
                    contentFile: document,
                    caFile: ca.certificatePath,
                    cades: true
                )
                #expect(result.succeeded, "doc-\(index + 1): \(result.errorOutput)")
            }
            try expectNoSecret(bao.token, in: signed, store: store)
        }
    }
}
