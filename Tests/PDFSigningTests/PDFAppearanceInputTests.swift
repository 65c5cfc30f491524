import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFAppearance
import PDFSigning
import Signing
import TestSupport
import Testing

@Suite("PDFSigner: bad appearance input is refused with its own error, and nothing is written")
struct PDFAppearanceInputTests {
    let signer: CyrillicSigner
    init() throws { signer = try CyrillicSigner() }

    /// Signs with `appearance` and returns the error; the output must not exist afterwards.
    func refusal(
        _ appearance: PDFSignatureAppearance,
        field: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> CertificateProviderError {
        let (directory, unsigned) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-appearance-refused")
        let output = directory.path("signed.pdf")
        let error = await #expect(throws: CertificateProviderError.self, sourceLocation: sourceLocation) {
            try await signer.sign(unsigned, output, appearance: appearance, field: field)
        }
        #expect(!FileManager.default.fileExists(atPath: output), "wrote \(output)", sourceLocation: sourceLocation)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.hasSuffix(".partial")
        }
        #expect(leftovers.isEmpty, "left \(leftovers)", sourceLocation: sourceLocation)
        return try #require(error, sourceLocation: sourceLocation)
    }

    static let box = PDFRectangle(x1: 100, y1: 100, x2: 300, y2: 160)

    @Test func rectangleOutsideThePage() async throws {
        let error = try await refusal(
            .init(placement: .rectangle(page: .number(1), .init(x1: 500, y1: 100, x2: 700, y2: 160)))
        )
        #expect(error.code == .invalidParameter)
        #expect(error.reason.contains("500,100,700,160") && error.reason.contains("0,0,595,842"), "\(error.reason)")
    }

    @Test func pageThatDoesNotExist() async throws {
        let error = try await refusal(.init(placement: .rectangle(page: .number(3), Self.box)))
        #expect(error.code == .invalidParameter)
        #expect(error.reason.contains("page 3 does not exist") && error.reason.contains("2 pages"), "\(error.reason)")
    }

    @Test func fontFileThatIsNotAFont() async throws {
        let directory = try TemporaryDirectory(prefix: "pdf-appearance-font")
        let notAFont = try directory.write("font.ttf", text: "this is not a font\n")
        let error = try await refusal(
            .init(placement: .rectangle(page: .number(1), Self.box), fontFile: URL(fileURLWithPath: notAFont))
        )
        #expect(error.code == .fontUnusable)
        #expect(error.reason.contains(notAFont) && error.reason.contains("not a font"), "\(error.reason)")
    }

    @Test func fontWithoutGlyphsForTheText() async throws {
        let error = try await refusal(
            .init(placement: .rectangle(page: .number(1), Self.box), textTemplate: "%(signer) 漢字")
        )
        #expect(error.code == .fontUnusable)
        #expect(error.reason.contains("'漢' (U+6F22), '字' (U+5B57)"), "\(error.reason)")
        #expect(error.reason.contains("DejaVuSans.ttf"), "\(error.reason)")
    }

    @Test("a missing default font names the Debian package that installs it")
    func missingDefaultFont() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/DejaVuSans.ttf"
        let error = #expect(throws: CertificateProviderError.self) { try DefaultFont.locate(at: missing) }
        #expect(error?.code == .fontUnusable)
        #expect(error?.reason.contains(missing) == true && error?.reason.contains("fonts-dejavu-core") == true)
        #expect(try DefaultFont.locate().path == DefaultFont.path)
    }

    @Test func unknownTemplateField() async throws {
        let error = try await refusal(
            .init(placement: .rectangle(page: .number(1), Self.box), textTemplate: "%(signer) %(sigenr)")
        )
        #expect(error.code == .invalidParameter)
        #expect(error.reason.contains("%(sigenr)") && error.reason.contains("%(signer)"), "\(error.reason)")
    }
}
