import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

@Suite("certsign sign --format pades and certsign verify FILE.pdf")
struct PDFCommandTests {
    @Test func signCountersignVerifyPDF() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let (passwordFile, contract) = try fixture.passwordFileAndContract()

        // Default output: contract-signed.pdf beside the input.
        let signed = try fixture.run([
            "--json", "sign", contract, "--format", "pades", "--p12", fixture.p12Path, "--password-file", passwordFile,
            "--reason", "Согласовано", "--location", "Berlin",
        ])
        #expect(signed.status == 0, "\(signed.errorOutput)")
        let signedPath = fixture.directory.path("contract-signed.pdf")
        #expect(FileManager.default.fileExists(atPath: signedPath))
        #expect(try ExternalTool.run("pdfsig", [signedPath]).output.contains("Signature is Valid."))

        // Countersign in place, into a named field.
        let second = try fixture.run([
            "sign", signedPath, "--format", "pades", "--p12", fixture.p12Path, "--password-file", passwordFile,
            "--field", "Approval", "--in-place",
        ])
        #expect(second.status == 0, "\(second.errorOutput)")

        let verified = try fixture.run(["--json", "verify", signedPath, "--ca", fixture.rootPath])
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")
        let json = try CLI.json(verified)
        #expect(json["valid"] as? Bool == true)
        let signatures = try #require(json["signatures"] as? [[String: Any]])
        let pdf = signatures.compactMap { $0["pdf"] as? [String: Any] }
        #expect(pdf.map { $0["field"] as? String } == ["Signature1", "Approval"])
        #expect(pdf.map { $0["coversWholeFile"] as? Bool } == [false, true])
        #expect(pdf.map { $0["laterChanges"] as? String } == ["signatures", "none"])
        #expect(pdf.map { $0["laterRevisionsSigned"] as? Bool } == [true, true])
        #expect(pdf.compactMap { $0["revision"] as? Int }.count == 2)

        // A byte changed inside the signed range: FAILED (HASH_FAILURE), exit 1.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: signedPath))
        let marker = try #require(bytes.range(of: Data("595".utf8)))
        bytes[marker.lowerBound + 2] = UInt8(ascii: "6")
        let tampered = try fixture.directory.write("tampered.pdf", bytes)
        let rejected = try fixture.run(["verify", tampered, "--ca", fixture.rootPath])
        #expect(rejected.status == 1)
        #expect(
            rejected.output.hasPrefix("field 'Signature1' (revision 2 of 3): FAILED: HASH_FAILURE — "),
            "\(rejected.output)"
        )
    }

    @Test("sign --format pades --tsa makes B-T; verify shows the proven time; CryptoPro DSS signs the PDF in hash mode")
    func padesBTAndServerSigning() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let emulator = try DSSEmulator(configuration: .init(requestLogLimit: 0))
        let url = try emulator.start()
        defer { emulator.stop() }
        let tsa = try #require(emulator.timestampURL).absoluteString
        let tsaCA = try fixture.directory.write("tsa-ca.pem", text: emulator.timestampAuthorityCA.pemRepresentation)
        let contract = try fixture.directory.write("contract.pdf", TestPDF.minimal())
        let environment = [
            "P12PASS": fixture.password, "DSS_PASSWORD": StandardSeed.password, "PIN": StandardSeed.certificatePIN,
        ]

        let signed = try fixture.run(
            [
                "--json", "sign", contract, "--format", "pades", "--p12", fixture.p12Path, "--password-env", "P12PASS",
                "--tsa", tsa, "--tsa-ca", tsaCA,
            ],
            environment: environment
        )
        #expect(signed.status == 0, "\(signed.errorOutput)")
        let result = try #require((try CLI.json(signed)["results"] as? [[String: Any]])?.first)
        #expect(result["level"] as? String == "B-T")
        let signedPath = fixture.directory.path("contract-signed.pdf")
        let verified = try fixture.run(["--json", "verify", signedPath, "--ca", fixture.rootPath, "--tsa-ca", tsaCA])
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")
        let pdf = try #require(
            ((try CLI.json(verified)["signatures"] as? [[String: Any]])?.first)?["pdf"] as? [String: Any]
        )
        #expect(pdf["provenTime"] is String && pdf["claimedTime"] is String, "\(pdf)")
        let text = try fixture.run(["verify", signedPath, "--ca", fixture.rootPath, "--tsa-ca", tsaCA])
        #expect(text.output.contains("proven time (signature timestamp)"), "\(text.output)")

        // A CryptoPro DSS certificate countersigns: the server signs the ByteRange digest.
        let countersigned = try fixture.run(
            [
                "sign", signedPath, "--format", "pades", "--in-place", "--provider", "cryptopro-dss",
                "--param", "url=\(url.absoluteString)", "--param", "username=\(StandardSeed.username)",
                "--param-env", "password=DSS_PASSWORD", "--param-env", "pin=PIN",
            ],
            environment: environment
        )
        #expect(countersigned.status == 0, "\(countersigned.errorOutput)")
        let pdfsig = try ExternalTool.run("pdfsig", [signedPath]).output
        #expect(pdfsig.components(separatedBy: "Signature is Valid.").count - 1 == 2, "\(pdfsig)")
        let dssCA = try fixture.directory.write("dss-ca.pem", text: emulator.certificateAuthorityPEM)
        let both = try fixture.run([
            "--json", "verify", signedPath, "--ca", fixture.rootPath, "--ca", dssCA, "--tsa-ca", tsaCA,
        ])
        #expect(both.status == 0, "\(both.output) \(both.errorOutput)")
    }

    @Test func padesOptionsNeedPadesFormat() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("a.txt", "a")
        let result = try fixture.run(
            ["sign", document, "--p12", fixture.p12Path, "--password-stdin", "--in-place"],
            input: fixture.password
        )
        #expect(result.status != 0)
        #expect(result.errorOutput.contains("--format pades"))
    }
}
