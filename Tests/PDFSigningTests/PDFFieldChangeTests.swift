import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

/// Changes after signing that hide in the form or in what qpdf cannot read: an appearance stream
/// redefined under its old number, an object at a broken offset or nested too deep, a signature
/// value a second field reuses, new unsigned signature fields that carry content or actions.
/// Each is built on a signed PDF and must be a change of its class; pyHanko's verdict is recorded
/// beside ours (it misses several of them).
@Suite("PDF change analysis: appearances by content, unreadable objects, reused and unsigned signature fields")
struct PDFFieldChangeTests {
    let pki: PDFPKI
    init() throws { pki = try PDFPKI(sharedBy: .pdfSuites) }

    /// A PDF of `layout` signed by certsign in a new directory named after `prefix`, then changed by
    /// `mode` into `file`: the directory and the changed PDF's path.
    func signedThenChanged(
        _ layout: PDFFixtures.Variant,
        _ mode: PDFFieldAttacks.Mode,
        in prefix: String,
        as file: String = "attacked.pdf"
    ) async throws -> (TemporaryDirectory, String) {
        let (directory, input) = try PDFFixtures.make(layout, inNewDirectory: prefix)
        let signed = directory.path("signed.pdf")
        try await pki.signOurs(input, signed)
        let changed = directory.path(file)
        try PDFFieldAttacks.apply(mode, to: signed, writingTo: changed)
        return (directory, changed)
    }

    func pyhankoVerdict(_ path: String, in directory: TemporaryDirectory) throws -> PDFChangeFixtures.Verdict {
        try #require(try PDFChangeFixtures.pyhankoVerdicts(path, root: pki.root, in: directory).first)
    }

    /// What signs the filled form before the attack.
    enum Policy: String, CaseIterable, Sendable {
        /// An approval signature by certsign: form filling is allowed.
        case approval
        /// A certification signature by pyHanko, DocMDP `/P 1`: nothing may change.
        case docMDPNoChanges
        /// A pyHanko signature locking field `Name` (FieldMDP).
        case fieldLock
    }

    @Test(
        "a filled field's appearance stream redefined under its old number: a form fill, refused under P=1 and a lock",
        arguments: Policy.allCases
    )
    func filledFieldAppearance(_ policy: Policy) async throws {
        let directory = try TemporaryDirectory(prefix: "pdf-field-ap")
        let form = try PDFFixtures.makeForm(.classic, in: directory)
        let filled = directory.path("filled.pdf")
        try PDFFieldAttacks.apply(.prepareFilledField, to: form, writingTo: filled)
        let signed = directory.path("signed.pdf")
        switch policy {
        case .approval:
            try await pki.signOurs(filled, signed)
        case .docMDPNoChanges:
            try PDFChangeFixtures.pyhanko(
                .certify(permission: 1, field: "Certification"),
                filled,
                output: signed,
                identity: pki.ec,
                in: directory
            )
        case .fieldLock:
            try PDFChangeFixtures.pyhanko(
                .lock(field: "Locking", locked: "Name"),
                filled,
                output: signed,
                identity: pki.ec,
                in: directory
            )
        }
        let attacked = directory.path("attacked.pdf")
        try PDFFieldAttacks.apply(.redefineAppearance(field: "Name"), to: signed, writingTo: attacked)
        let signature = try #require(try pki.verify(attacked).signatures.first)
        #expect(signature.isIntactAndVerified, "\(signature.verification)")
        #expect(signature.laterChanges == (policy == .fieldLock ? .other : .formFields), "\(signature.changes)")
        #expect(signature.changesAllowed == (policy == .approval), "\(signature.changes)")
        #expect(
            signature.changes.contains { $0.text.contains("appearance (/AP)") && $0.text.contains("'Name'") },
            "\(signature.changes)"
        )
        let verdict = try pyhankoVerdict(attacked, in: directory)
        // pyHanko's verdict, beside ours: it compares the redefined stream too.
        #expect(verdict.changesAcceptable == (policy == .approval), "\(verdict)")
    }

    @Test(
        "the signed signature's own widget appearance redefined: other, not allowed",
        arguments: ["certsign", "pyHanko"]
    )
    func signatureWidgetAppearance(_ signer: String) async throws {
        let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-field-sig-ap")
        let prepared = directory.path("prepared.pdf")
        try PDFFieldAttacks.apply(.prepareVisibleSignatureField, to: input, writingTo: prepared)
        let signed = directory.path("signed.pdf")
        if signer == "certsign" {
            try await pki.signOurs(prepared, signed, field: "Sig1")
        } else {
            try PDFFixtures.pyhankoSign(prepared, output: signed, identity: pki.ec, field: "Sig1", in: directory)
        }
        let attacked = directory.path("attacked.pdf")
        try PDFFieldAttacks.apply(.redefineAppearance(field: "Sig1"), to: signed, writingTo: attacked)
        let report = try pki.verify(attacked)
        let signature = try #require(report.signatures.first)
        #expect(signature.isIntactAndVerified, "\(signature.verification)")
        #expect(signature.laterChanges == .other && !signature.isValid && !report.isValid, "\(signature.changes)")
        #expect(
            signature.changes.contains { $0.text.contains("signed signature field 'Sig1'") && !$0.isAllowed },
            "\(signature.changes)"
        )
        let verdict = try pyhankoVerdict(attacked, in: directory)
        #expect(!verdict.changesAcceptable, "\(verdict)")
    }

    @Test(
        "a key added with an object qpdf cannot read (a broken offset, nesting too deep): other, not absent",
        arguments: ["offset", "nesting"],
        [PDFFixtures.Variant.classic, .objectStreams]
    )
    func unreadableObject(_ variant: String, _ layout: PDFFixtures.Variant) async throws {
        let (directory, attacked) = try await signedThenChanged(
            layout,
            .unreadableObject(variant),
            in: "pdf-field-unreadable"
        )
        let report = try pki.verify(attacked)
        let signature = try #require(report.signatures.first)
        #expect(signature.isIntactAndVerified, "\(signature.verification)")
        #expect(signature.laterChanges == .other && !signature.isValid, "\(signature.changes)")
        // qpdf reads the new /OpenAction's object as null (and its key as absent); its warning is the change.
        #expect(
            signature.changes.contains { $0.text.contains("qpdf cannot read") && !$0.isAllowed },
            "\(signature.changes)"
        )
        let verdict = try pyhankoVerdict(attacked, in: directory)
        print("pyHanko, \(variant) \(layout): \(verdict)")
    }

    @Test("a new signature field reusing the first signature's value: other, not allowed")
    func reusedSignatureValue() async throws {
        let (directory, attacked) = try await signedThenChanged(
            .objectStreams,
            .reuseSignatureValue,
            in: "pdf-field-reuse"
        )
        let report = try pki.verify(attacked)
        #expect(report.signatures.map(\.field) == ["Signature1", "Copy"])
        for signature in report.signatures {
            #expect(signature.isIntactAndVerified, "\(signature.verification)")
            #expect(signature.laterChanges == .other && !signature.isValid, "\(signature.changes)")
            #expect(
                signature.changes.contains { $0.text.contains("one signature value serves") && !$0.isAllowed },
                "\(signature.changes)"
            )
        }
        #expect(!report.isValid)
        let verdicts = try PDFChangeFixtures.pyhankoVerdicts(attacked, root: pki.root, in: directory)
        print("pyHanko, reused value: \(verdicts)")
    }

    @Test(
        "a new unsigned signature field may carry only an empty widget: content is annotations, actions and kids other",
        arguments: ["empty", "emptyBox", "appearance", "javascript", "uri", "link", "freeText"]
    )
    func unsignedSignatureField(_ variant: String) async throws {
        let (directory, attacked) = try await signedThenChanged(
            .classic,
            .unsignedSignatureField(variant),
            in: "pdf-field-unsigned"
        )
        let signature = try #require(try pki.verify(attacked).signatures.first)
        #expect(signature.isIntactAndVerified, "\(signature.verification)")
        let expected: PDFLaterChanges =
            switch variant {
            case "empty", "emptyBox": .signatures
            case "appearance": .annotations
            default: .other
            }
        #expect(signature.laterChanges == expected, "\(signature.changes)")
        #expect(signature.isValid == (expected == .signatures), "\(signature.changes)")
        #expect(signature.changes.contains { $0.text.contains("'Extra'") }, "\(signature.changes)")
        // pyHanko accepts every one of them as a new signature field; ours refuses the content.
        let verdict = try pyhankoVerdict(attacked, in: directory)
        print("pyHanko, unsigned signature field \(variant): \(verdict)")
    }

    @Test("200 revisions after a signature, each an /Info update: ltv, valid, every revision compared")
    func manyRevisions() async throws {
        let (directory, updated) = try await signedThenChanged(
            .classic,
            .infoUpdates(count: 200),
            in: "pdf-field-many",
            as: "updated.pdf"
        )
        // The directory (and the PDF in it) lives until the report is read.
        let report = try withExtendedLifetime(directory) { try pki.verify(updated) }
        let signature = try #require(report.signatures.first)
        #expect(report.revisionCount == 202)
        #expect(signature.laterChanges == .ltv && signature.isValid, "\(signature.changes.prefix(3))")
        #expect(Set(signature.changes.map(\.revision)).count == 200, "\(signature.changes.count)")
    }

    @Test("an odd number of hex digits in /Contents: the ByteRange is refused, what it covers is unclear")
    func oddContents() async throws {
        let (directory, odd) = try await signedThenChanged(.classic, .oddContents, in: "pdf-field-odd", as: "odd.pdf")
        let report = try pki.verify(odd)
        let signature = try #require(report.signatures.first)
        #expect(signature.byteRangeProblem?.contains("odd number of hex digits") == true, "\(signature)")
        #expect(!signature.isValid && !report.isValid)
        // pyHanko reads the odd string as padded and accepts the file; we refuse to guess.
        let verdict = try pyhankoVerdict(odd, in: directory)
        #expect(verdict.changesAcceptable && verdict.bottomLine == true, "\(verdict)")
    }

    @Test("an indirect /ByteRange (the CMS verifies over what it names): refused, what it covers is unclear")
    func indirectByteRange() async throws {
        let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-field-indirect")
        let files = try PDFFixtures.pyhankoFiles(pki.ec, prefix: "indirect", in: directory)
        let signed = directory.path("signed.pdf")
        try PDFFieldAttacks.apply(
            .indirectByteRange(certificate: files.certificate, key: files.key, chain: files.chain),
            to: input,
            writingTo: signed,
            environment: ["KEY_PASSWORD": PDFFixtures.pyhankoKeyPassword]
        )
        let report = try pki.verify(signed)
        let signature = try #require(report.signatures.first)
        #expect(signature.field == "Indirect")
        #expect(signature.verification.isValid, "\(signature.verification)")
        #expect(signature.byteRangeProblem?.contains("reference") == true, "\(signature)")
        #expect(!signature.isValid && !report.isValid)
        // pyHanko cannot read an indirect /ByteRange at all.
        let verdict = try pyhankoVerdict(signed, in: directory)
        #expect(verdict.error != nil, "\(verdict)")
    }
}
