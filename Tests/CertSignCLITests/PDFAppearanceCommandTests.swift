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

    @Test("--appearance text+image with a PNG: pdfimages lists it and its SMask; --image is required and checked")
    func imageAppearances() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let (_, contract) = try fixture.passwordFileAndContract()
        let seal = fixture.directory.path("seal.png")
        // One half-transparent red pixel: a PNG with an alpha channel, written out byte by byte.
        let pixel =
            "89504E470D0A1A0A0000000D49484452000000010000000108060000001F15C489"
            + "0000000D49444154789C63F8CFC0D00000048101802C55CEB00000000049454E44AE426082"
        try Data(pixel.hexBytes).write(to: URL(fileURLWithPath: seal))
        let signed = fixture.directory.path("contract-signed.pdf")
        let first = try sign(
            fixture,
            contract,
            ["--appearance", "text+image", "--image", seal, "--rect", "300,80,560,160", "--out", signed]
        )
        #expect(first.status == 0, "\(first.errorOutput)")
        let rows = try PDFRender.images(signed).map { $0.split(separator: " ")[2] }
        #expect(rows.sorted() == ["image", "smask"], "\(rows)")
        let noImage = try sign(fixture, signed, ["--appearance", "image", "--rect", "10,10,100,60", "--in-place"])
        #expect(noImage.status == 64 && noImage.errorOutput.contains("--appearance image needs --image FILE"))
        let text = try fixture.document("seal.txt", "not an image")
        let refused = try sign(
            fixture,
            signed,
            ["--appearance", "image", "--image", text, "--rect", "10,10,100,60", "--field", "Seal", "--in-place"]
        )
        #expect(
            refused.status == 1 && refused.errorOutput.contains("is not a PNG or JPEG image"),
            "\(refused.errorOutput)"
        )
        #expect(try PDFRender.images(signed).count == 2)
    }

    @Test("--field NAME on a PDF with pyHanko's empty signature field: the appearance fills that field")
    func fieldAppearance() throws {
        let fixture = try CLIFixture(keyType: .rsa2048)
        let (_, contract) = try fixture.passwordFileAndContract()
        let withField = fixture.directory.path("with-field.pdf")
        try PyHankoFields.addSignatureField(
            contract,
            output: withField,
            name: "Approval",
            page: 1,
            box: (300, 80, 560, 160)
        )
        let signed = fixture.directory.path("signed.pdf")
        let result = try sign(fixture, withField, ["--appearance", "text", "--field", "Approval", "--out", signed])
        #expect(result.status == 0, "\(result.errorOutput)")
        let text = try PDFRender.text(signed)
        #expect(text.contains("Подписант CLI"), "pdftotext: \(text)")
        let changed = try PDFRender.page(signed).differences(from: try PDFRender.page(withField))
        #expect(!changed.isEmpty && changed.allSatisfy { (298...562).contains($0.x) && (680...764).contains($0.y) })
        let verified = try fixture.run(["verify", signed, "--ca", fixture.rootPath])
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

extension String {
    /// The bytes of a string of hex digits.
    fileprivate var hexBytes: [UInt8] {
        stride(from: 0, to: count, by: 2).map { offset in
            let start = index(startIndex, offsetBy: offset)
            return UInt8(self[start..<index(start, offsetBy: 2)], radix: 16) ?? 0
        }
    }
}
