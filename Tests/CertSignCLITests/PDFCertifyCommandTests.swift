import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

@Suite("certsign sign --format pades --certify 1|2|3: certification signatures from the command line")
struct PDFCertifyCommandTests {
    /// `sign PDF --format pades --p12 … ARGUMENTS` with the fixture's key.
    func sign(_ fixture: CLIFixture, _ pdf: String, _ arguments: [String]) throws -> ExternalTool.Result {
        let passwordFile = fixture.directory.path("p12.pass")
        return try fixture.run(
            ["sign", pdf, "--format", "pades", "--p12", fixture.p12Path, "--password-file", passwordFile] + arguments
        )
    }

    @Test("--certify 2: pyHanko and verify read P=2; a later approval in a new field passes both; qpdf is content")
    func certifyThenApprove() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let (_, contract) = try fixture.passwordFileAndContract()
        let certified = fixture.directory.path("certified.pdf")
        let signed = try sign(fixture, contract, ["--certify", "2", "--out", certified])
        #expect(signed.status == 0, "\(signed.errorOutput)")
        #expect(signed.output.contains("certified, DocMDP P=2 (form filling and signing)"), "\(signed.output)")
        let certification = try PyHankoCertification.read(certified)
        #expect(certification?.field == "Signature1" && certification?.permission == 2)
        let verified = try fixture.run(["verify", certified, "--ca", fixture.rootPath])
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")
        #expect(verified.output.contains("covers the whole file (certified, DocMDP /P 2)"), "\(verified.output)")

        let approved = fixture.directory.path("approved.pdf")
        let approval = try sign(fixture, certified, ["--field", "Approval", "--out", approved])
        #expect(approval.status == 0, "\(approval.errorOutput)")
        let json = try CLI.json(try fixture.run(["--json", "verify", approved, "--ca", fixture.rootPath]))
        #expect(json["valid"] as? Bool == true, "\(json)")
        let signatures = try #require(json["signatures"] as? [[String: Any]])
        let first = try #require(signatures.first?["pdf"] as? [String: Any])
        #expect(first["docMDP"] as? Int == 2 && first["laterChanges"] as? String == "signatures", "\(first)")
        let verdicts = try PyHankoValidator.validate(
            approved,
            root: fixture.pki.root.certificate,
            in: fixture.directory
        )
        #expect(verdicts.count == 2, "\(verdicts)")
        #expect(
            verdicts.allSatisfy { $0.contains("INTACT:TRUSTED") && !$0.contains("ILLEGAL_MODIFICATIONS") },
            "\(verdicts)"
        )
        for path in [certified, approved] {
            let check = try ExternalTool.run("qpdf", ["--check", path])
            #expect(check.status == 0 && !check.output.contains("WARNING"), "\(check.output)")
        }
    }

    @Test("--certify 1 locks the PDF: a second sign exits 1 with the reason and writes nothing")
    func certifiedNoChanges() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let (_, contract) = try fixture.passwordFileAndContract()
        let certified = fixture.directory.path("certified.pdf")
        #expect(try sign(fixture, contract, ["--certify", "1", "--out", certified]).status == 0)
        #expect(try PyHankoCertification.read(certified)?.permission == 1)
        let second = fixture.directory.path("second.pdf")
        let refused = try sign(fixture, certified, ["--out", second])
        #expect(refused.status == 1, "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("'no changes allowed' (DocMDP P=1)"), "\(refused.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: second))
    }

    @Test("--certify on a signed PDF exits 1; --certify 4 or with --format cades 64; nothing written")
    func refusals() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let (_, contract) = try fixture.passwordFileAndContract()
        let signed = fixture.directory.path("signed.pdf")
        #expect(try sign(fixture, contract, ["--out", signed]).status == 0)
        let output = fixture.directory.path("certified.pdf")
        let cases: [(pdf: String, arguments: [String], status: Int32, message: String)] = [
            (signed, ["--certify", "2"], 1, "is signed already (field 'Signature1'): a certification signature"),
            (contract, ["--certify", "4"], 64, "unknown --certify '4' (1, 2 or 3)"),
            (contract, ["--certify", "2", "--format", "cades"], 64, "--certify goes with --format pades"),
        ]
        for (pdf, arguments, status, message) in cases {
            let result = try sign(fixture, pdf, arguments + ["--out", output])
            #expect(result.status == status, "\(arguments): \(result.errorOutput)")
            #expect(result.errorOutput.contains(message), "\(arguments): \(result.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: output), "\(arguments) wrote \(output)")
        }
    }
}
