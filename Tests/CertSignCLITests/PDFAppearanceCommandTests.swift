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
}
