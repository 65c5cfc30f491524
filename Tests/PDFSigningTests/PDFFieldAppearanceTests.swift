import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

@Suite("PDFSigner: an appearance in an existing empty signature field made by pyHanko")
struct PDFFieldAppearanceTests {
    let signer: CyrillicSigner
    init() throws { signer = try CyrillicSigner() }

    /// A fresh two-page PDF with an empty signature field `Approval` that pyHanko added on `page`,
    /// and the field's rectangle.
    static func approvalField(
        onPage page: Int,
        in prefix: String
    ) throws -> (directory: TemporaryDirectory, path: String, box: PDFRectangle) {
        let (directory, plain) = try PDFFixtures.make(.classic, inNewDirectory: prefix)
        let withField = directory.path("with-field.pdf")
        try PyHankoFields.addSignatureField(
            plain,
            output: withField,
            name: "Approval",
            page: page,
            box: (320, 500, 540, 560)
        )
        return (directory, withField, PDFRectangle(x1: 320, y1: 500, x2: 540, y2: 560))
    }

    @Test("placement .field fills the field's widget rectangle on its page; pyHanko and our verifier accept it")
    func fillsPyHankoField() async throws {
        let (directory, withField, box) = try Self.approvalField(onPage: 2, in: "pdf-appearance-field")
        let signed = directory.path("signed.pdf")
        try await signer.sign(withField, signed, appearance: .init(placement: .field), field: "Approval")

        let text = try PDFRender.text(signed, page: 2)
        #expect(text.contains("Иванов Иван Иванович"), "pdftotext: \(text)")
        try AppearanceChecks.expectDrawnOnlyIn(box, onPage: 2, of: 2, before: withField, after: signed)
        try PDFFixtures.expectOthersAccept(signed, root: signer.pki.root, in: directory)
        let report = try signer.pki.verify(signed)
        #expect(report.isValid, "\(report)")
        #expect(report.signatures.map(\.field) == ["Approval"])
    }

    @Test("a rectangle for an existing field, or .field without one, is refused and nothing is written")
    func fieldPlacementMistakes() async throws {
        let (directory, withField, box) = try Self.approvalField(onPage: 1, in: "pdf-appearance-field-refused")
        let output = directory.path("signed.pdf")
        let cases: [(PDFSignatureAppearance, String, String)] = [
            (.init(placement: .rectangle(page: .number(1), box)), "Approval", "its own rectangle is used"),
            (.init(placement: .field), "Missing", "has no empty signature field 'Missing'"),
        ]
        for (appearance, field, message) in cases {
            let error = await #expect(throws: CertificateProviderError.self) {
                try await signer.sign(withField, output, appearance: appearance, field: field)
            }
            #expect(error?.code == .invalidParameter)
            #expect(error?.reason.contains(message) == true, "\(error?.reason ?? "")")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }
}
