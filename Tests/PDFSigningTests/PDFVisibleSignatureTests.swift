import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

/// A signer whose name needs Cyrillic glyphs, under the shared PDF test root.
struct CyrillicSigner: Sendable {
    let pki: PDFPKI
    let identity: SigningIdentity

    private init(making: Void) throws {
        pki = try PDFPKI(sharedBy: .pdfSuites)
        identity = try pki.pki.issueLeaf(subject: "CN=Иванов Иван Иванович,O=ООО Ромашка", keyType: .rsa2048)
    }

    private static let shared = Result { try CyrillicSigner(making: ()) }
    /// The signer every appearance suite shares (its key made once per process).
    init() throws { self = try Self.shared.get() }

    /// Signs `input` into `output` with a visible appearance.
    func sign(
        _ input: String,
        _ output: String,
        appearance: PDFSignatureAppearance,
        field: String? = nil,
        reason: String? = "Согласовано"
    ) async throws {
        var options = PDFSignatureOptions(fieldName: field, reason: reason)
        options.appearance = appearance
        try await PDFSigner.sign(
            pdfAt: URL(fileURLWithPath: input),
            writingTo: URL(fileURLWithPath: output),
            identity: identity,
            options: options
        )
    }
}

/// Checks of what a page shows around a signature's rectangle.
enum AppearanceChecks {
    /// The pixel rows and columns of `rectangle` on a `page` rendered at 72 dpi, grown by `margin`
    /// pixels for anti-aliasing.
    static func contains(
        _ rectangle: PDFRectangle,
        page: PDFRender.Page,
        margin: Int = 2
    ) -> ((x: Int, y: Int)) -> Bool {
        { point in
            point.x >= Int(rectangle.x1) - margin && point.x <= Int(rectangle.x2) + margin
                && point.y >= page.height - Int(rectangle.y2) - margin
                && point.y <= page.height - Int(rectangle.y1) + margin
        }
    }

    /// `after` differs from `before` inside `rectangle` (something is drawn) and nowhere else.
    static func expectDrawnOnlyIn(
        _ rectangle: PDFRectangle,
        before: PDFRender.Page,
        after: PDFRender.Page,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let changed = after.differences(from: before)
        let inside = contains(rectangle, page: after)
        #expect(changed.count > 100, "nothing drawn in \(rectangle)", sourceLocation: sourceLocation)
        let outside = changed.filter { !inside($0) }
        #expect(
            outside.isEmpty,
            "pixels changed outside \(rectangle): \(outside.prefix(5))",
            sourceLocation: sourceLocation
        )
    }

    /// The file `after`, rendered, differs from `before` inside `rectangle` on page `page` (something
    /// is drawn) and nowhere else on that page; the other pages up to `pageCount` are unchanged.
    static func expectDrawnOnlyIn(
        _ rectangle: PDFRectangle,
        onPage page: Int,
        of pageCount: Int,
        before: String,
        after: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        expectDrawnOnlyIn(
            rectangle,
            before: try PDFRender.page(before, page),
            after: try PDFRender.page(after, page),
            sourceLocation: sourceLocation
        )
        for other in 1...pageCount where other != page {
            let changed = try PDFRender.page(after, other).differences(from: try PDFRender.page(before, other))
            #expect(changed.isEmpty, "page \(other) changed", sourceLocation: sourceLocation)
        }
    }
}

@Suite("PDFSigner: visible signatures (HarfBuzz text, embedded font subset) that poppler, qpdf and pyHanko accept")
struct PDFVisibleSignatureTests {
    let signer: CyrillicSigner
    init() throws { signer = try CyrillicSigner() }

    @Test("a Cyrillic and Latin text appearance: one subset font, extractable text, drawn only in its box, valid")
    func cyrillicTextAppearance() async throws {
        let (directory, unsigned) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-appearance")
        let first = directory.path("first.pdf")
        let box = PDFRectangle(x1: 300, y1: 80, x2: 560, y2: 160)
        try await signer.sign(unsigned, first, appearance: .init(placement: .rectangle(page: .number(1), box)))

        let embedded = try PDFRender.fonts(first).filter { $0.contains(" yes yes ") }
        #expect(embedded.count == 1, "pdffonts: \(embedded)")
        #expect(embedded.first?.contains("+DejaVuSans") == true, "pdffonts: \(embedded)")
        #expect(embedded.first?.contains("CID TrueType") == true, "pdffonts: \(embedded)")
        let text = try PDFRender.text(first)
        #expect(text.contains("Иванов Иван Иванович"), "pdftotext: \(text)")
        #expect(text.contains("Согласовано"), "pdftotext: \(text)")
        AppearanceChecks.expectDrawnOnlyIn(box, before: try PDFRender.page(unsigned), after: try PDFRender.page(first))
        try PDFFixtures.expectOthersAccept(first, root: signer.pki.root, in: directory)
        #expect(try signer.pki.verify(first).isValid)

        // A second visible signature in another field: the first box renders as it did.
        let second = directory.path("second.pdf")
        let otherBox = PDFRectangle(x1: 40, y1: 80, x2: 280, y2: 160)
        try await signer.sign(
            first,
            second,
            appearance: .init(placement: .rectangle(page: .number(1), otherBox), textTemplate: "Approved: %(signer)"),
            field: "Approval"
        )
        AppearanceChecks.expectDrawnOnlyIn(
            otherBox,
            before: try PDFRender.page(first),
            after: try PDFRender.page(second)
        )
        try PDFFixtures.expectOthersAccept(second, root: signer.pki.root, signatures: 2, in: directory)
        let report = try signer.pki.verify(second)
        #expect(report.isValid, "\(report)")
    }

    @Test("the last page, a right-to-left and combining-mark text, and an xref-stream file")
    func otherScriptsAndLayouts() async throws {
        let (directory, unsigned) = try PDFFixtures.make(.objectStreams, inNewDirectory: "pdf-appearance-rtl")
        let signed = directory.path("signed.pdf")
        let box = PDFRectangle(x1: 60, y1: 400, x2: 400, y2: 470)
        let appearance = PDFSignatureAppearance(
            placement: .rectangle(page: .last, box),
            textTemplate: "שלום %(signer)\\nΚαλημέρα e\u{301}"
        )
        try await signer.sign(unsigned, signed, appearance: appearance)
        let text = try PDFRender.text(signed, page: 2)
        #expect(text.contains("Καλημέρα"), "pdftotext: \(text)")
        #expect(text.contains("Иванов"), "pdftotext: \(text)")
        try AppearanceChecks.expectDrawnOnlyIn(box, onPage: 2, of: 2, before: unsigned, after: signed)
        try PDFFixtures.expectOthersAccept(signed, root: signer.pki.root, in: directory)
    }
}
