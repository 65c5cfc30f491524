import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

/// What a signature allows after it: approval signatures, validation data and form filling
/// without certification; DocMDP `/P` 1, 2, 3 of a certification signature; FieldMDP locks. Each
/// against pyHanko's verdict on the same file.
@Suite("PDF change analysis: DocMDP, FieldMDP and the updates that are allowed, pyHanko agreeing")
struct PDFChangePolicyTests {
    let pki: PDFPKI
    init() throws { pki = try PDFPKI(sharedBy: .pdfSuites) }

    /// Applies `update` to `input` into `output` with pyHanko, signing (when it signs) with the EC key.
    func pyhanko(
        _ update: PDFChangeFixtures.Update,
        _ input: String,
        _ output: String,
        in directory: TemporaryDirectory
    ) throws {
        try PDFChangeFixtures.pyhanko(update, input, output: output, identity: pki.ec, in: directory)
    }

    @Test(
        "approval signatures by certsign and pyHanko after each other: allowed",
        arguments: PDFFixtures.Variant.allCases
    )
    func approvals(_ variant: PDFFixtures.Variant) async throws {
        let (directory, input) = try PDFFixtures.make(variant, inNewDirectory: "pdf-policy-approvals")
        let first = directory.path("first.pdf")
        try await pki.signOurs(input, first)
        let second = directory.path("second.pdf")
        try PDFFixtures.pyhankoSign(first, output: second, identity: pki.ec, field: "PyHankoSig", in: directory)
        let third = directory.path("third.pdf")
        try await pki.signOurs(second, third)
        let report = try pki.verify(third)
        #expect(report.isValid, "\(report.signatures.map(\.changes))")
        #expect(report.signatures.map(\.laterChanges) == [.signatures, .signatures, .none])
        #expect(report.signatures.allSatisfy { $0.changesAllowed })
        #expect(report.signatures[0].changes.allSatisfy { $0.kind == .signatures || $0.kind == .ltv })
        let verdicts = try PDFChangeFixtures.pyhankoVerdicts(third, root: pki.root, in: directory)
        #expect(
            verdicts.count == 3 && verdicts.allSatisfy { $0.changesAcceptable && $0.bottomLine == true },
            "\(verdicts)"
        )
    }

    @Test("a DSS update and a document timestamp by pyHanko: ltv, allowed", arguments: [false, true])
    func validationData(_ pyHankoSigned: Bool) async throws {
        let (directory, input) = try PDFFixtures.make(.objectStreams, inNewDirectory: "pdf-policy-ltv")
        let signed = directory.path("signed.pdf")
        if pyHankoSigned {
            try PDFFixtures.pyhankoSign(input, output: signed, identity: pki.ec, field: "Sig", in: directory)
        } else {
            try await pki.signOurs(input, signed)
        }
        let withDSS = directory.path("dss.pdf")
        try pyhanko(.dss, signed, withDSS, in: directory)
        let tsa = try PDFChangeFixtures.timestampAuthority(in: directory)
        let stamped = directory.path("stamped.pdf")
        try pyhanko(.timestamp(certificate: tsa.certificate, key: tsa.key), withDSS, stamped, in: directory)
        for path in [withDSS, stamped] {
            let signature = try #require(try pki.verify(path).signatures.first)
            #expect(signature.isValid, "\(signature.changes)")
            #expect(signature.laterChanges == .ltv && signature.changesAllowed, "\(signature.changes)")
            #expect(!signature.changes.isEmpty)
            let verdict = try #require(try PDFChangeFixtures.pyhankoVerdicts(path, root: pki.root, in: directory).first)
            #expect(verdict.level == "LTA_UPDATES" && verdict.changesAcceptable, "\(verdict)")
            #expect(verdict.bottomLine == true, "\(verdict)")
        }
        // The timestamp is a new signature field whose value is a /DocTimeStamp.
        let signature = try #require(try pki.verify(stamped).signatures.first)
        #expect(signature.changes.contains { $0.kind == .ltv && $0.text.contains("document timestamp") })
    }

    @Test(
        "a form fill: allowed without certification and under DocMDP P=2, not under P=1",
        arguments: [nil, 1, 2] as [Int?]
    )
    func formFill(_ permission: Int?) async throws {
        let directory = try TemporaryDirectory(prefix: "pdf-policy-fill")
        let form = try PDFFixtures.makeForm(.classic, in: directory)
        let signed = directory.path("signed.pdf")
        if let permission {
            try pyhanko(.certify(permission: permission, field: "Certification"), form, signed, in: directory)
        } else {
            try await pki.signOurs(form, signed)
        }
        let filled = directory.path("filled.pdf")
        try PDFFixtures.fillNameField(signed, output: filled)
        let signature = try #require(try pki.verify(filled).signatures.first)
        #expect(signature.isIntactAndVerified)
        #expect(signature.docMDPPermission == permission)
        #expect(signature.laterChanges == .formFields, "\(signature.changes)")
        let allowed = permission != 1
        #expect(signature.changesAllowed == allowed && signature.isValid == allowed, "\(signature.changes)")
        #expect(signature.changes.contains { $0.kind == .formFields && $0.text.contains("'Name'") })
        let verdict = try #require(try PDFChangeFixtures.pyhankoVerdicts(filled, root: pki.root, in: directory).first)
        #expect(verdict.changesAcceptable == allowed && verdict.bottomLine == allowed, "\(verdict)")
        #expect(verdict.level == "FORM_FILLING", "\(verdict)")
    }

    @Test("FieldMDP: a field the signature locks is filled afterwards: other, not allowed")
    func lockedField() async throws {
        let directory = try TemporaryDirectory(prefix: "pdf-policy-lock")
        let form = try PDFFixtures.makeForm(.objectStreams, in: directory)
        let signed = directory.path("signed.pdf")
        try pyhanko(.lock(field: "Locking", locked: "Name"), form, signed, in: directory)
        let filled = directory.path("filled.pdf")
        try PDFFixtures.fillNameField(signed, output: filled)
        let signature = try #require(try pki.verify(filled).signatures.first)
        #expect(signature.laterChanges == .other && !signature.changesAllowed, "\(signature.changes)")
        #expect(signature.laterChangesDetail?.contains("locked") == true, "\(signature.laterChangesDetail ?? "")")
        let verdict = try #require(try PDFChangeFixtures.pyhankoVerdicts(filled, root: pki.root, in: directory).first)
        #expect(!verdict.changesAcceptable, "\(verdict)")
    }

    @Test(
        "an annotation: DocMDP P=3 allows it, P=2 does not (pyHanko's has no annotation rule); certified by either",
        arguments: [2, 3],
        [false, true]
    )
    func annotationUnderCertification(_ permission: Int, certifiedByUs: Bool) async throws {
        let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-policy-annot")
        let certified = directory.path("certified.pdf")
        if certifiedByUs {
            var options = PDFSignatureOptions()
            options.certification = PDFDocMDPPermission(rawValue: permission)
            try await PDFSigner.sign(
                pdfAt: URL(fileURLWithPath: input),
                writingTo: URL(fileURLWithPath: certified),
                identity: pki.rsa,
                options: options
            )
        } else {
            try pyhanko(.certify(permission: permission, field: "Certification"), input, certified, in: directory)
        }
        let annotated = directory.path("annotated.pdf")
        try PDFAttacks.apply(.annotation("Square"), to: certified, writingTo: annotated)
        let signature = try #require(try pki.verify(annotated).signatures.first)
        #expect(signature.docMDPPermission == permission)
        #expect(signature.laterChanges == .annotations, "\(signature.changes)")
        #expect(signature.changesAllowed == (permission == 3), "\(signature.changes)")
        if permission == 2 { #expect(signature.laterChangesDetail?.contains("DocMDP /P 2") == true) }
        // pyHanko classifies any new annotation as OTHER (its rules: "TODO allow other annotation
        // modifications, but at level ANNOTATIONS"), so it refuses it under P=3 too.
        let verdict = try #require(
            try PDFChangeFixtures.pyhankoVerdicts(annotated, root: pki.root, in: directory).first
        )
        #expect(verdict.level == "OTHER" && !verdict.changesAcceptable, "\(verdict)")
    }
}
