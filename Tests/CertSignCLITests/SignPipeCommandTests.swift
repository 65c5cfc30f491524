import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

@Suite("certsign sign --pem, sign - --format pades --out -, verify -: signatures and PDFs through pipes")
struct SignPipeCommandTests {
    @Test("--pem writes the CMS as openssl cms -outform PEM does; openssl and verify accept it; PAdES refuses --pem")
    func pemSignature() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let document = try fixture.document("invoice.txt", "Счёт № 42\n")
        try fixture.signWithP12(document, ["--pem"])
        let signature = document + ".p7s"
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: signature)), as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "-----BEGIN CMS-----")
        #expect(lines.dropLast().last == "-----END CMS-----" && lines.last == "")
        let body = lines.dropFirst().dropLast(2)
        #expect(body.dropLast().allSatisfy { $0.count == 64 } && (body.last?.count ?? 0) <= 64)
        // Byte for byte what OpenSSL writes for the same CMS.
        let reencoded = try ExternalTool.run(
            "openssl",
            ["cms", "-cmsout", "-inform", "PEM", "-in", signature, "-outform", "PEM"]
        )
        #expect(reencoded.succeeded && reencoded.output == text, "\(reencoded.errorOutput)")
        let openssl = try OpenSSLCMS.verify(
            signatureFile: signature,
            contentFile: document,
            caFile: fixture.rootPath,
            inform: "PEM"
        )
        #expect(openssl.succeeded, "\(openssl.errorOutput)")
        let verified = try fixture.run(["verify", signature, "--content", document, "--ca", fixture.rootPath])
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")

        // To standard output, PEM too.
        let piped = try fixture.run(
            ["sign", "-", "--pem", "--attached", "--p12", fixture.p12Path, "--password-env", "P12PASS"],
            environment: ["P12PASS": fixture.password],
            input: "Счёт № 43\n"
        )
        #expect(piped.status == 0, "\(piped.errorOutput)")
        #expect(piped.output.hasPrefix("-----BEGIN CMS-----\n") && piped.output.hasSuffix("-----END CMS-----\n"))

        let pdf = try fixture.directory.write("contract.pdf", TestPDF.minimal())
        let refused = try fixture.run(
            ["sign", pdf, "--format", "pades", "--pem", "--p12", fixture.p12Path, "--password-env", "P12PASS"],
            environment: ["P12PASS": fixture.password]
        )
        #expect(refused.status == 64, "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("--pem"), "\(refused.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.path("contract-signed.pdf")))
    }

    @Test("sign - --format pades --out - signs a PDF from a pipe into a pipe; nothing stays in TMPDIR")
    func padesThroughPipes() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let (_, contract) = try fixture.passwordFileAndContract()
        let unsigned = try Data(contentsOf: URL(fileURLWithPath: contract))
        let temporary = try TemporaryDirectory(prefix: "certsign-pipe-tmp")
        let environment = ["P12PASS": fixture.password, "TMPDIR": temporary.url.path]
        let key = ["--p12", fixture.p12Path, "--password-env", "P12PASS"]

        let signed = try fixture.run(
            ["sign", "-", "--format", "pades", "--out", "-", "--reason", "Согласовано"] + key,
            environment: environment,
            inputBytes: unsigned
        )
        #expect(signed.status == 0, "\(signed.errorOutput)")
        #expect(signed.standardOutput.starts(with: unsigned), "the signed PDF is an incremental update of the input")
        #expect(signed.errorOutput.contains("signed - -> standard output"), "\(signed.errorOutput)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.url.path).isEmpty)
        let signedPath = try fixture.directory.write("piped-signed.pdf", signed.standardOutput)
        let verified = try fixture.run(["verify", signedPath, "--ca", fixture.rootPath])
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")
        let verdicts = try PyHankoValidator.validate(
            signedPath,
            root: fixture.pki.root.certificate,
            in: fixture.directory
        )
        #expect(verdicts.count == 1 && verdicts.allSatisfy { $0.contains("INTACT:TRUSTED") }, "\(verdicts)")

        // A file into a pipe: the JSON summary goes to stderr, the PDF alone to stdout.
        let fromFile = try fixture.run(
            ["--json", "sign", contract, "--format", "pades", "--out", "-"] + key,
            environment: environment
        )
        #expect(fromFile.status == 0, "\(fromFile.errorOutput)")
        #expect(fromFile.standardOutput.starts(with: unsigned))
        let summary = try JSONSerialization.jsonObject(with: fromFile.standardError) as? [String: Any]
        let result = try #require((summary?["results"] as? [[String: Any]])?.first, "\(fromFile.errorOutput)")
        #expect(result["signature"] as? String == "-" && result["status"] as? String == "signed")
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.path("contract-signed.pdf")))

        // Not a PDF: exit 1, nothing on stdout, nothing left in TMPDIR.
        let refused = try fixture.run(
            ["sign", "-", "--format", "pades"] + key,
            environment: environment,
            inputBytes: Data("not a PDF\n".utf8)
        )
        #expect(refused.status == 1 && refused.standardOutput.isEmpty, "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("standard input is not a PDF"), "\(refused.errorOutput)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.url.path).isEmpty)
    }
}
