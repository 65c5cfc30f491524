import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

@Suite("certsign sign --format pades --appearance: visible signatures from the command line")
struct PDFAppearanceCommandTests {
    /// `sign CONTRACT --format pades --p12 … ARGUMENTS` with the fixture's key.
    func sign(_ fixture: CLIFixture, _ contract: String, _ arguments: [String]) throws -> ExternalTool.Result {
        let passwordFile = fixture.directory.path("p12.pass")
        return try fixture.run(
            ["sign", contract, "--format", "pades", "--p12", fixture.p12Path, "--password-file", passwordFile]
                + arguments
        )
    }

    @Test("--appearance text on the last page: the signer's name is on the page, verify accepts it")
    func textAppearance() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let (_, contract) = try fixture.passwordFileAndContract()
        let signed = try sign(
            fixture,
            contract,
            ["--appearance", "text", "--page", "last", "--rect", "300,80,560,160", "--reason", "Согласовано"]
        )
        #expect(signed.status == 0, "\(signed.errorOutput)")
        let signedPath = fixture.directory.path("contract-signed.pdf")
        // The contract has two pages: the last is the second.
        let text = try PDFRender.text(signedPath, page: 2)
        #expect(text.contains("Подписант CLI") && text.contains("Согласовано"), "pdftotext: \(text)")
        #expect(!(try PDFRender.text(signedPath, page: 1)).contains("Подписант CLI"))
        let verified = try fixture.run(["verify", signedPath, "--ca", fixture.rootPath])
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")
    }

    @Test("bad appearance input: exit 1 with the library's reason, or 64 for the command line; nothing written")
    func badInput() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let (_, contract) = try fixture.passwordFileAndContract()
        let notAFont = try fixture.document("font.ttf", "not a font")
        let signedPath = fixture.directory.path("contract-signed.pdf")
        let cases: [(arguments: [String], status: Int32, message: String)] = [
            (["--appearance", "text", "--rect", "500,100,700,160"], 1, "lies outside the page"),
            (["--appearance", "text", "--page", "7", "--rect", "10,10,100,60"], 1, "page 7 does not exist"),
            (["--appearance", "text", "--rect", "10,10,100,60", "--font", notAFont], 1, "is not a font file"),
            (["--appearance", "text", "--rect", "10,10,100,60", "--text", "%(signer) 漢"], 1, "'漢' (U+6F22)"),
            (["--appearance", "text", "--rect", "10,10,100,60", "--text", "%(nmae)"], 1, "unknown field %(nmae)"),
            (["--appearance", "text", "--rect", "10,10,100"], 64, "--rect '10,10,100' is not four numbers"),
            (["--appearance", "text", "--page", "0", "--rect", "10,10,100,60"], 64, "--page '0'"),
            (["--appearance", "stamp", "--rect", "10,10,100,60"], 64, "unknown --appearance 'stamp'"),
            (["--appearance", "text"], 64, "--appearance needs --rect"),
            (["--rect", "10,10,100,60"], 64, "go with --appearance"),
        ]
        for (arguments, status, message) in cases {
            let result = try sign(fixture, contract, arguments)
            #expect(result.status == status, "\(arguments): \(result.errorOutput)")
            #expect(result.errorOutput.contains(message), "\(arguments): \(result.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: signedPath), "\(arguments) wrote the PDF")
        }
    }
}
