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

        // Several documents (the batch pipeline): each file PEM.
        let second = try fixture.document("invoice-2.txt", "Счёт № 44\n")
        try fixture.signWithP12(document, [second, "--pem", "--out-dir", fixture.directory.path("batch")])
        for (name, content) in [("invoice.txt.p7s", document), ("invoice-2.txt.p7s", second)] {
            let file = fixture.directory.path("batch/" + name)
            let armoured = String(decoding: try Data(contentsOf: URL(fileURLWithPath: file)), as: UTF8.self)
            #expect(armoured.hasPrefix("-----BEGIN CMS-----\n"), "\(name)")
            let check = try OpenSSLCMS.verify(
                signatureFile: file,
                contentFile: content,
                caFile: fixture.rootPath,
                inform: "PEM"
            )
            #expect(check.succeeded, "\(name): \(check.errorOutput)")
        }

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

    @Test("verify - reads a PDF or an attached CMS from standard input, shown as stdin; a tampered one exits 1")
    func verifyStandardInput() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let (_, contract) = try fixture.passwordFileAndContract()
        let temporary = try TemporaryDirectory(prefix: "certsign-pipe-tmp")
        let environment = ["TMPDIR": temporary.url.path]
        try fixture.signWithP12(contract, ["--format", "pades"])
        let pdf = try Data(contentsOf: URL(fileURLWithPath: fixture.directory.path("contract-signed.pdf")))
        let passed = try fixture.run(
            ["verify", "-", "--ca", fixture.rootPath],
            environment: environment,
            inputBytes: pdf
        )
        #expect(passed.status == 0, "\(passed.output) \(passed.errorOutput)")
        #expect(passed.output.hasPrefix("field 'Signature1' (revision 2 of 2): PASSED"), "\(passed.output)")
        let json = try CLI.json(
            try fixture.run(
                ["--json", "verify", "-", "--ca", fixture.rootPath],
                environment: environment,
                inputBytes: pdf
            )
        )
        #expect(json["document"] as? String == "stdin" && json["valid"] as? Bool == true, "\(json)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.url.path).isEmpty)

        // A byte changed inside the signed range: FAILED, exit 1.
        var tampered = pdf
        let marker = try #require(tampered.range(of: Data("595".utf8)))
        tampered[marker.lowerBound + 2] = UInt8(ascii: "6")
        let failed = try fixture.run(
            ["verify", "-", "--ca", fixture.rootPath],
            environment: environment,
            inputBytes: tampered
        )
        #expect(failed.status == 1, "\(failed.output) \(failed.errorOutput)")
        #expect(
            failed.output.hasPrefix("field 'Signature1' (revision 2 of 2): FAILED: HASH_FAILURE"),
            "\(failed.output)"
        )
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.url.path).isEmpty)

        // An attached CMS, DER and PEM: nothing else needed.
        let document = try fixture.document("report.txt", "Отчёт\n")
        try fixture.signWithP12(document, ["--attached", "--out", fixture.directory.path("report.der.p7s")])
        try fixture.signWithP12(document, ["--attached", "--pem", "--out", fixture.directory.path("report.pem.p7s")])
        for name in ["report.der.p7s", "report.pem.p7s"] {
            let signature = Data(try fixture.directory.read(name))
            let verified = try fixture.run(["verify", "-", "--ca", fixture.rootPath], inputBytes: signature)
            #expect(verified.status == 0, "\(name): \(verified.output) \(verified.errorOutput)")
            #expect(verified.output.hasPrefix("PASSED\nsigner:       CN=Подписант CLI"), "\(name): \(verified.output)")
            let json = try CLI.json(
                try fixture.run(["--json", "verify", "-", "--ca", fixture.rootPath], inputBytes: signature)
            )
            #expect(json["signature"] as? String == "stdin" && json["valid"] as? Bool == true, "\(json)")
        }
        // Among files: its line names it stdin.
        let many = try fixture.run(
            ["verify", "-", fixture.directory.path("report.der.p7s"), "--ca", fixture.rootPath],
            inputBytes: Data(try fixture.directory.read("report.pem.p7s"))
        )
        #expect(many.status == 0 && many.output.hasPrefix("PASSED: stdin (CN=Подписант CLI"), "\(many.output)")
        // A detached one with --content; without it, the hint.
        try fixture.signWithP12(document, ["--out", fixture.directory.path("report.detached.p7s")])
        let detached = Data(try fixture.directory.read("report.detached.p7s"))
        let withContent = try fixture.run(
            ["verify", "-", "--content", document, "--ca", fixture.rootPath],
            inputBytes: detached
        )
        #expect(withContent.status == 0, "\(withContent.output) \(withContent.errorOutput)")
        let withoutContent = try fixture.run(["verify", "-", "--ca", fixture.rootPath], inputBytes: detached)
        #expect(
            withoutContent.status != 0 && withoutContent.output.contains("--content FILE"),
            "\(withoutContent.output)"
        )
        // Standard input once.
        let twice = try fixture.run(["verify", "-", "-", "--ca", fixture.rootPath], inputBytes: detached)
        #expect(twice.status == 64, "\(twice.errorOutput)")
    }
}
