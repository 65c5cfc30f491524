import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

@Suite("PDFSigner: certification signatures (DocMDP /P 1, 2, 3), pyHanko reading them as we do")
struct PDFCertificationTests {
    let pki: PDFPKI
    init() throws { pki = try PDFPKI(sharedBy: .pdfSuites) }

    /// Certifies `input` into `output` with the RSA signer and `permission`.
    func certify(_ input: String, _ output: String, _ permission: PDFDocMDPPermission) async throws {
        var options = PDFSignatureOptions(reason: "Issued")
        options.certification = permission
        try await pki.signOurs(input, output, options: options)
    }

    @Test(
        "P=2: certified for pyHanko and for us; a later approval signature in a new field passes both",
        arguments: PDFFixtures.Variant.allCases
    )
    func fillFormsThenApproval(_ variant: PDFFixtures.Variant) async throws {
        let (directory, input) = try PDFFixtures.make(variant, inNewDirectory: "pdf-certify")
        let certified = directory.path("certified.pdf")
        try await certify(input, certified, .fillForms)
        // The certification is an incremental update: the original bytes are untouched.
        let original = try Data(contentsOf: URL(fileURLWithPath: input))
        #expect(try Data(contentsOf: URL(fileURLWithPath: certified)).prefix(original.count) == original)
        let certification = try PyHankoCertification.read(certified)
        #expect(
            certification?.field == "Signature1" && certification?.permission == 2,
            "\(String(describing: certification))"
        )
        let report = try pki.verify(certified)
        #expect(report.isValid && report.signatures.first?.docMDPPermission == 2)
        try PDFFixtures.expectOthersAccept(certified, root: pki.root, in: directory)

        let approved = directory.path("approved.pdf")
        try await pki.signOurs(certified, approved, field: "Approval")
        let later = try pki.verify(approved)
        #expect(later.isValid, "\(later.signatures.map(\.changes))")
        #expect(later.signatures.map(\.field) == ["Signature1", "Approval"])
        #expect(later.signatures.first?.docMDPPermission == 2)
        #expect(later.signatures.first?.laterChanges == .signatures, "\(later.signatures.map(\.changes))")
        let verdicts = try PDFChangeFixtures.pyhankoVerdicts(approved, root: pki.root, in: directory)
        #expect(verdicts.count == 2, "\(verdicts)")
        #expect(verdicts.allSatisfy { $0.changesAcceptable && $0.bottomLine == true }, "\(verdicts)")
        #expect(verdicts.first?.level == "FORM_FILLING", "\(verdicts)")
        #expect(try PyHankoCertification.read(approved)?.permission == 2)
        try PDFFixtures.expectPopplerAndQPDFAccept(approved, signatures: 2)
    }

    @Test("certifying into pyHanko's empty signature field (its /AcroForm an indirect object): /Perms is set")
    func certifiesIntoExistingField() async throws {
        let (directory, plain) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-certify-field")
        let withField = directory.path("with-field.pdf")
        try PyHankoFields.addSignatureField(plain, output: withField, name: "Approval", page: 1, box: (10, 10, 100, 60))
        var options = PDFSignatureOptions(fieldName: "Approval")
        options.certification = .annotate
        let certified = directory.path("certified.pdf")
        try await PDFSigner.sign(
            pdfAt: URL(fileURLWithPath: withField),
            writingTo: URL(fileURLWithPath: certified),
            identity: pki.rsa,
            options: options
        )
        let certification = try PyHankoCertification.read(certified)
        #expect(
            certification?.field == "Approval" && certification?.permission == 3,
            "\(String(describing: certification))"
        )
        let report = try pki.verify(certified)
        #expect(report.isValid && report.signatures.map(\.docMDPPermission) == [3])
        try PDFFixtures.expectOthersAccept(certified, root: pki.root, in: directory)
    }

    @Test(
        "P=1, certified by us or by pyHanko: both read P=1, and another signature is refused, nothing written",
        arguments: [true, false]
    )
    func noChangesRefusesLaterSignatures(_ certifiedByUs: Bool) async throws {
        let (directory, input) = try PDFFixtures.make(.objectStreams, inNewDirectory: "pdf-certify-locked")
        let certified = directory.path("certified.pdf")
        if certifiedByUs {
            try await certify(input, certified, .noChanges)
        } else {
            try PDFFixtures.pyhankoSign(
                input,
                output: certified,
                identity: pki.ec,
                field: "Author",
                in: directory,
                certifyNoChanges: true
            )
        }
        #expect(try PyHankoCertification.read(certified)?.permission == 1)
        #expect(try pki.verify(certified).signatures.first?.docMDPPermission == 1)
        try PDFFixtures.expectOthersAccept(certified, root: pki.root, in: directory)
        let output = directory.path("second.pdf")
        let error = await #expect(throws: CertificateProviderError.self) {
            try await pki.signOurs(certified, output)
        }
        #expect(error?.code == .pdfChangesForbidden)
        #expect(error?.reason.contains("'no changes allowed' (DocMDP P=1)") == true, "\(error?.reason ?? "")")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("P=1 still lets validation data in: a document timestamp is added, and both judge it allowed")
    func noChangesAcceptsDocumentTimestamp() async throws {
        try await withEmulator(.init(requestLogLimit: 0)) { emulator, _ in
            let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-certify-docts")
            let certified = directory.path("certified.pdf")
            try await certify(input, certified, .noChanges)
            let stamped = directory.path("stamped.pdf")
            try await PDFSigner.addDocumentTimestamp(
                toPDFAt: URL(fileURLWithPath: certified),
                writingTo: URL(fileURLWithPath: stamped),
                authority: try emulatorTSA(emulator)
            )
            let certification = try #require(try pki.verify(stamped).signatures.first)
            #expect(certification.docMDPPermission == 1)
            #expect(certification.laterChanges == .ltv && certification.changesAllowed, "\(certification.changes)")
            let verdict = try #require(
                try PDFChangeFixtures.pyhankoVerdicts(stamped, root: pki.root, in: directory).first
            )
            #expect(verdict.level == "LTA_UPDATES" && verdict.changesAcceptable, "\(verdict)")
            let check = try PDFFixtures.qpdfCheck(stamped)
            #expect(check.status == 0 && !check.output.contains("WARNING"), "\(check.output)")
        }
    }

    @Test("certifying a PDF signed already (by us or by pyHanko) is refused: certification must be the first")
    func certificationMustBeFirst() async throws {
        let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-certify-first")
        let ours = directory.path("ours.pdf")
        try await pki.signOurs(input, ours, field: "First")
        let theirs = directory.path("theirs.pdf")
        try PDFFixtures.pyhankoSign(input, output: theirs, identity: pki.ec, field: "First", in: directory)
        for signed in [ours, theirs] {
            let output = directory.path("certified.pdf")
            let error = await #expect(throws: CertificateProviderError.self) {
                try await certify(signed, output, .fillForms)
            }
            #expect(error?.code == .pdfCertificationNotFirst)
            #expect(
                error?.reason.contains("is signed already (field 'First'): a certification signature") == true,
                "\(error?.reason ?? "")"
            )
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }
}
