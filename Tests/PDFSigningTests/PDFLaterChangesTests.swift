import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

@Suite("PDFSignatureVerifier laterChanges: signatures only, form fields filled, or other changes")
struct PDFLaterChangesTests {
    let pki: PDFPKI
    init() throws { pki = try PDFPKI(sharedBy: .pdfSuites) }

    /// Signs `input` with the RSA key, lets `change` write a later revision of it into `name`, and
    /// verifies that file.
    /// - Returns: the changed file's path, the report and its first signature.
    func signThenChange(
        _ input: String,
        into name: String,
        in directory: TemporaryDirectory,
        _ change: (_ signed: String, _ output: String) throws -> Void
    ) async throws -> (path: String, report: PDFVerificationReport, first: PDFSignatureReport) {
        let signed = try await directory.signPDF(input, into: "signed.pdf", identity: pki.rsa).path
        let changed = directory.path(name)
        try change(signed, changed)
        let report = try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: changed), trustAnchors: [pki.root])
        return (changed, report, try #require(report.signatures.first))
    }

    @Test("a later revision that adds a second signature: signatures", arguments: PDFFixtures.Variant.allCases)
    func secondSignature(_ variant: PDFFixtures.Variant) async throws {
        let (directory, input) = try PDFFixtures.make(variant, inNewDirectory: "pdf-later-sig")
        let first = try await directory.signPDF(input, into: "first.pdf", identity: pki.rsa).path
        // A countersignature by pyHanko's writer, then one by ours.
        let second = directory.path("second.pdf")
        try PDFFixtures.pyhankoSign(first, output: second, identity: pki.ec, field: "PyHankoSig", in: directory)
        let third = try await directory.signPDF(second, into: "third.pdf", identity: pki.ec).path
        let report = try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: third), trustAnchors: [pki.root])
        #expect(report.isValid)
        #expect(
            report.signatures.map(\.laterChanges) == [.signatures, .signatures, .none],
            "\(report.signatures.map { "\($0.field) \($0.laterChanges) \($0.laterChangesDetail ?? "")" })"
        )
        #expect(!report.hasUnsignedChanges)
    }

    @Test("a later revision that fills a form field: formFields; a further signature keeps it so")
    func formFieldFilled() async throws {
        let directory = try TemporaryDirectory(prefix: "pdf-later-form")
        let form = try PDFFixtures.makeForm(.classic, in: directory)
        let (filled, report, signature) = try await signThenChange(form, into: "filled.pdf", in: directory) {
            try PDFFixtures.fillNameField($0, output: $1)
        }
        #expect(signature.verification.isValid)
        #expect(signature.laterChanges == .formFields, "\(signature.laterChangesDetail ?? "")")
        #expect(!signature.laterRevisionsSigned)
        #expect(report.hasUnsignedChanges)

        // Signed again after the fill: the first signature still sees a fill, the fill is now signed.
        let countersigned = try await directory.signPDF(filled, into: "countersigned.pdf", identity: pki.ec).path
        let again = try PDFSignatureVerifier.verify(
            pdfAt: URL(fileURLWithPath: countersigned),
            trustAnchors: [pki.root]
        )
        #expect(
            again.signatures.map(\.laterChanges) == [.formFields, .none],
            "\(again.signatures.map { $0.laterChangesDetail ?? "" })"
        )
        #expect(!again.hasUnsignedChanges && again.isValid)
    }

    @Test("a later revision that changes page content: other changes, reported with the object")
    func pageContentChanged() async throws {
        let (directory, input) = try PDFFixtures.make(.objectStreams, inNewDirectory: "pdf-later-content")
        let (_, report, signature) = try await signThenChange(input, into: "changed.pdf", in: directory) {
            try PDFFixtures.changePageContent($0, output: $1)
        }
        // The signed revision is intact; what the file shows now is not what was signed.
        #expect(signature.verification.isValid)
        #expect(signature.laterChanges == .other)
        #expect(signature.laterChangesDetail?.contains("stream") == true, "\(signature.laterChangesDetail ?? "")")
        #expect(report.hasUnsignedChanges)
    }

    @Test(
        "a changed page hidden as the second object of a new object stream is found, whatever whitespace the stream's header uses",
        arguments: [" ", "\r\n", "\t", "\u{0C}"]
    )
    func changeInsideObjectStream(_ separator: String) async throws {
        let (directory, input) = try PDFFixtures.make(.objectStreams, inNewDirectory: "pdf-later-objstm")
        let (changed, _, signature) = try await signThenChange(input, into: "changed.pdf", in: directory) {
            try PDFFixtures.rotatePageInObjectStream($0, output: $1, separator: separator)
        }
        // qpdf reads the update and sees the rotated page (so the file is what a viewer shows).
        let shown = try ExternalTool.run(
            "qpdf",
            ["--show-object=\(try PDFFixtures.firstPageObject(changed))", changed]
        )
        #expect(shown.output.contains("/Rotate 90"), "\(shown.output) \(shown.errorOutput)")
        #expect(signature.verification.isValid)
        #expect(signature.laterChanges == .other, "\(signature.laterChangesDetail ?? "")")
        #expect(signature.laterChangesDetail?.contains("Rotate") == true, "\(signature.laterChangesDetail ?? "")")
    }
}
