import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `certsign csr` with a PKCS#12 file made by the openssl tool, and its refusals.
@Suite("certsign csr: pkcs12, and the refusals", .enabled(if: CLI.isBuilt))
struct CSRCommandTests {
    /// A PKCS#12 file (RSA-2048, password from P12_PASSWORD) made by openssl; its path.
    func makePKCS12(_ work: TemporaryDirectory) throws -> String {
        let made = try ExternalTool.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", "/CN=Old Certificate",
                "-keyout", work.path("key.pem"), "-out", work.path("cert.pem"),
            ]
        )
        try #require(made.succeeded, "\(made.errorOutput)")
        let exported = try ExternalTool.run(
            "openssl",
            [
                "pkcs12", "-export", "-inkey", work.path("key.pem"), "-in", work.path("cert.pem"), "-passout",
                "env:P12_PASSWORD", "-out", work.path("signer.p12"),
            ],
            environment: ["P12_PASSWORD": "пароль-123"]
        )
        try #require(exported.succeeded, "\(exported.errorOutput)")
        return work.path("signer.p12")
    }

    @Test("--provider pkcs12 --param file=…: a request openssl verifies, with the file's key and a Cyrillic subject")
    func pkcs12() throws {
        let work = try TemporaryDirectory()
        let store = try TemporaryDirectory()
        let p12 = try makePKCS12(work)
        let out = work.path("renew.csr")
        let result = try CLI.run(
            [
                "--json", "csr", "--provider", "pkcs12", "--param", "file=\(p12)", "--param-env",
                "password=P12_PASSWORD",
                "--subject", "CN=Иван Петров,O=ООО Ромашка,C=RU", "--san", "DNS:signer.example.ru", "--digest",
                "sha384", "--out", out,
            ],
            store: store,
            environment: ["P12_PASSWORD": "пароль-123"]
        )
        #expect(result.succeeded, "\(result.errorOutput)")
        #expect(!(result.output + result.errorOutput).contains("пароль-123"))
        let json = try CLI.json(result)
        #expect(json["provider"] as? String == "pkcs12" && json["publicKeyAlgorithm"] as? String == "RSA")
        let verified = try ExternalTool.run("openssl", ["req", "-in", out, "-verify", "-noout", "-text"])
        #expect(verified.succeeded && verified.errorOutput.contains("verify OK"), "\(verified.errorOutput)")
        #expect(verified.output.contains("sha384WithRSAEncryption"), "\(verified.output)")
        #expect(verified.output.contains("DNS:signer.example.ru"), "\(verified.output)")
        let inRequest = try ExternalTool.run("openssl", ["req", "-in", out, "-noout", "-pubkey"]).output
        let inFile = try ExternalTool.run("openssl", ["x509", "-in", work.path("cert.pem"), "-noout", "-pubkey"]).output
        #expect(!inRequest.isEmpty && inRequest == inFile)
        let subject = try ExternalTool.run("openssl", ["req", "-in", out, "-noout", "-subject", "-nameopt", "utf8"])
        #expect(
            subject.output.contains("CN=Иван Петров") && subject.output.contains("O=ООО Ромашка"),
            "\(subject.output)"
        )
        // Without --out the PEM goes to standard output.
        let printed = try CLI.run(
            [
                "csr", "--provider", "pkcs12", "--param", "file=\(p12)", "--param-env", "password=P12_PASSWORD",
                "--subject", "CN=Stdout",
            ],
            store: store,
            environment: ["P12_PASSWORD": "пароль-123"]
        )
        #expect(printed.succeeded && printed.output.hasPrefix("-----BEGIN CERTIFICATE REQUEST-----"))
    }

    @Test("a wrong password, a bad subject, a bad SAN, a provider without request signing: exit 1, no file")
    func refusals() throws {
        let work = try TemporaryDirectory()
        let store = try TemporaryDirectory()
        let p12 = try makePKCS12(work)
        let out = work.path("refused.csr")
        let base = ["csr", "--provider", "pkcs12", "--param", "file=\(p12)", "--param-env", "password=P12_PASSWORD"]
        let cases: [(String, [String], String, String)] = [
            ("wrong password", ["--subject", "CN=X"], "wrong", "password"),
            ("bad subject", ["--subject", "CN=X,Nonsense"], "пароль-123", "'Nonsense' is not FIELD=value"),
            ("unknown field", ["--subject", "XYZ=1"], "пароль-123", "'XYZ'"),
            ("bad SAN", ["--subject", "CN=X", "--san", "mailto:x@example.ru"], "пароль-123", "DNS:host"),
        ]
        for (name, extra, password, reason) in cases {
            let result = try CLI.run(
                base + extra + ["--out", out],
                store: store,
                environment: ["P12_PASSWORD": password]
            )
            #expect(result.status == 1, "\(name): \(result.status) \(result.errorOutput)")
            #expect(result.errorOutput.contains(reason), "\(name): \(result.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: out), "\(name): a file was written")
        }
        let csc = try CLI.run(
            ["csr", "--provider", "csc", "--param", "url=https://csc.example", "--subject", "CN=X", "--out", out],
            store: store
        )
        #expect(csc.status == 1 && csc.errorOutput.contains("cannot sign a certificate request"), "\(csc.errorOutput)")
        let usage = try CLI.run(["csr", "--provider", "pkcs12"], store: store)
        #expect(usage.status == 64 && usage.errorOutput.contains("--subject"), "\(usage.errorOutput)")
    }
}
