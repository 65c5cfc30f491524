import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

/// The known PDF attacks and the shadow / incremental-saving variants, each built
/// here on a PDF signed by certsign and by pyHanko, with a classic xref and with xref streams:
/// every one must be a change the policy does not allow, of the right class, with pyHanko's
/// verdict asserted beside ours.
@Suite("PDF change analysis: attacks after signing are found on the object graph, pyHanko agreeing")
struct PDFAttackTests {
    let pki: PDFPKI
    init() throws { pki = try PDFPKI(sharedBy: .pdfSuites) }

    enum Signer: String, CaseIterable, Sendable { case certsign, pyHanko }

    enum Attack: String, CaseIterable, Sendable {
        case newRoot, freeText, stamp, square, growContents, disguiseMetadata, disguiseForm
        case freeContents, hideAndReplaceRoot, repoint, noEndOfFile, noCrossReference, noPrevious

        /// The class our analysis must give it.
        var kind: PDFLaterChanges {
            switch self {
            case .freeText, .stamp, .square: return .annotations
            default: return .other
            }
        }
    }

    struct Case: Sendable, CustomStringConvertible {
        let signer: Signer
        let variant: PDFFixtures.Variant
        var description: String { "\(signer) \(variant)" }
        static let all = Signer.allCases.flatMap { signer in
            [PDFFixtures.Variant.classic, .objectStreams].map { Case(signer: signer, variant: $0) }
        }
    }

    /// Signs `input` into `output` with the case's signer (field `Sig1` when the input has it).
    func sign(
        _ input: String,
        _ output: String,
        _ signer: Signer,
        field: String?,
        in directory: TemporaryDirectory
    )
        async throws
    {
        switch signer {
        case .certsign:
            try await PDFSigner.sign(
                pdfAt: URL(fileURLWithPath: input),
                writingTo: URL(fileURLWithPath: output),
                identity: pki.rsa,
                options: PDFSignatureOptions(fieldName: field)
            )
        case .pyHanko:
            try PDFFixtures.pyhankoSign(input, output: output, identity: pki.ec, field: field ?? "Sig", in: directory)
        }
    }

    /// Builds `attack` on a freshly signed PDF; returns the attacked file.
    func build(_ attack: Attack, _ testCase: Case, in directory: TemporaryDirectory) async throws -> String {
        var input = try PDFFixtures.make(testCase.variant, in: directory)
        let signed = directory.path("signed.pdf")
        let attacked = directory.path("attacked.pdf")
        var field: String?
        var hidden = 0
        var shadowOffset = 0
        switch attack {
        case .growContents:
            let prepared = directory.path("prepared.pdf")
            try PDFAttacks.apply(.prepareContentsArray, to: input, writingTo: prepared)
            input = prepared
        case .hideAndReplaceRoot:
            let prepared = directory.path("prepared.pdf")
            hidden = try #require(Int(try PDFAttacks.apply(.prepareHiddenCatalog, to: input, writingTo: prepared)))
            input = prepared
            field = "Sig1"
        case .repoint:
            let prepared = directory.path("prepared.pdf")
            shadowOffset = try #require(Int(try PDFAttacks.apply(.prepareShadow, to: input, writingTo: prepared)))
            input = prepared
        default:
            break
        }
        try await sign(input, signed, testCase.signer, field: field, in: directory)
        let mode: PDFAttacks.Mode
        switch attack {
        case .newRoot: mode = .newRoot
        case .freeText: mode = .annotation("FreeText")
        case .stamp: mode = .annotation("Stamp")
        case .square: mode = .annotation("Square")
        case .growContents: mode = .growContents
        case .disguiseMetadata: mode = .disguise(key: "/Type", value: "/Metadata")
        case .disguiseForm: mode = .disguise(key: "/Subtype", value: "/Form")
        case .freeContents: mode = .freeContents
        case .hideAndReplaceRoot: mode = .root(hidden)
        case .repoint: mode = .repoint(number: try PDFAttacks.firstContentsObject(signed), offset: shadowOffset)
        case .noEndOfFile: mode = .noEndOfFile
        case .noCrossReference: mode = .noCrossReference
        case .noPrevious: mode = .noPrevious
        }
        try PDFAttacks.apply(mode, to: signed, writingTo: attacked)
        return attacked
    }

    @Test("every attack is a change the policy does not allow, of its class", arguments: Attack.allCases, Case.all)
    func attack(_ attack: Attack, _ testCase: Case) async throws {
        let directory = try TemporaryDirectory(prefix: "pdf-attack")
        let attacked = try await build(attack, testCase, in: directory)
        let report = try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: attacked), trustAnchors: [pki.root])
        let signature = try #require(report.signatures.first)
        let changes = signature.changes.map(\.description)
        // The signed bytes are intact; what the file shows now is not what was signed.
        #expect(signature.isIntactAndVerified, "\(signature.verification)")
        #expect(!signature.changesAllowed && !signature.isValid && !report.isValid, "\(changes)")
        #expect(signature.laterChanges == attack.kind, "\(changes)")
        #expect(signature.laterChangesDetail != nil)
        #expect(!signature.laterRevisionsSigned && report.hasUnsignedChanges)
        let refused = try #require(signature.changes.first { !$0.isAllowed })
        #expect(refused.revision > signature.revision || attack == .noPrevious, "\(refused)")
        if attack != .noCrossReference && attack != .noPrevious {
            #expect(!refused.objects.isEmpty, "\(refused)")
        }

        let verdicts = try PDFChangeFixtures.pyhankoVerdicts(attacked, root: pki.root, in: directory)
        let verdict = try #require(verdicts.first)
        switch attack {
        case .noEndOfFile:
            // pyHanko misses an update without a final %%EOF (it still reads the signed revision
            // as the last one); qpdf, like a viewer, reads the update and shows the new text.
            #expect(verdict.level == "NONE" && verdict.changesAcceptable, "\(verdict)")
            let shown = try ExternalTool.run(
                "qpdf",
                ["--show-object=\(try PDFAttacks.firstContentsObject(attacked))", "--filtered-stream-data", attacked]
            )
            #expect(shown.output.contains(PDFAttacks.evilText), "\(shown.output)")
        case .noCrossReference:
            // Objects no cross-reference section lists: pyHanko and a strict reader ignore them; a
            // reader that rebuilds the xref would show them, and no signature covers them, so we
            // refuse the file where pyHanko accepts it.
            #expect(verdict.level == "NONE" && verdict.changesAcceptable, "\(verdict)")
            #expect(report.unreferencedTrailingBytes > 0)
        default:
            #expect(verdict.level == "OTHER" && !verdict.changesAcceptable, "\(verdict)")
            #expect(verdict.bottomLine == false, "\(verdict)")
        }
    }

    @Test("item 7: the attack countersigned afterwards still shows on the first signature", arguments: Case.all)
    func countersignedAttack(_ testCase: Case) async throws {
        let directory = try TemporaryDirectory(prefix: "pdf-attack-countersigned")
        let attacked = try await build(.newRoot, testCase, in: directory)
        let (countersigned, _) = try await directory.signPDF(
            attacked,
            into: "countersigned.pdf",
            identity: pki.ec,
            options: PDFSignatureOptions(fieldName: "Counter")
        )
        let report = try PDFSignatureVerifier.verify(
            pdfAt: URL(fileURLWithPath: countersigned),
            trustAnchors: [pki.root]
        )
        #expect(report.signatures.count == 2)
        let first = try #require(report.signatures.first)
        #expect(first.laterChanges == .other && !first.changesAllowed, "\(first.changes)")
        #expect(first.changes.contains { $0.text.contains("/Root") && !$0.isAllowed }, "\(first.changes)")
        let last = try #require(report.signatures.last)
        #expect(last.coversWholeFile && last.isValid)
        #expect(!report.hasUnsignedChanges && !report.isValid)
        let verdicts = try PDFChangeFixtures.pyhankoVerdicts(countersigned, root: pki.root, in: directory)
        #expect(verdicts.count == 2, "\(verdicts)")
        #expect(verdicts.first.map { $0.level == "OTHER" && !$0.changesAcceptable } == true, "\(verdicts)")
        #expect(verdicts.last.map { $0.changesAcceptable && $0.bottomLine == true } == true, "\(verdicts)")
    }

    @Test("a cyclic outline of 5000 items: a title changed at its far end is found, without hanging")
    func cyclicOutline() async throws {
        let (directory, input) = try PDFFixtures.make(.objectStreams, inNewDirectory: "pdf-attack-outline")
        let prepared = directory.path("prepared.pdf")
        try PDFAttacks.apply(.prepareOutlines(count: 5000), to: input, writingTo: prepared)
        let signed = directory.path("signed.pdf")
        try await sign(prepared, signed, .certsign, field: nil, in: directory)
        let attacked = directory.path("attacked.pdf")
        try PDFAttacks.apply(.retitleOutline(index: 4999), to: signed, writingTo: attacked)
        let clock = ContinuousClock()
        let start = clock.now
        let report = try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: attacked), trustAnchors: [pki.root])
        let elapsed = clock.now - start
        let signature = try #require(report.signatures.first)
        #expect(signature.laterChanges == .other && !signature.changesAllowed, "\(signature.changes)")
        let change = try #require(signature.changes.first)
        #expect(change.text.contains("/Outlines") && change.text.contains("/Title"), "\(change)")
        #expect(change.text.count < 400, "\(change)")
        #expect(elapsed < .seconds(60), "\(elapsed)")
        // pyHanko's own analysis recurses along the chain and gives up.
        let verdict = try #require(try PDFChangeFixtures.pyhankoVerdicts(attacked, root: pki.root, in: directory).first)
        #expect(verdict.error?.contains("RecursionError") == true, "\(verdict)")
    }

    @Test(
        "USF: a forged signature field without a usable /ByteRange or /Contents is INVALID; pyHanko refuses the file",
        arguments: ["no-byterange", "zero-byterange", "no-contents"]
    )
    func universalSignatureForgery(_ variant: String) async throws {
        let (directory, input) = try PDFFixtures.make(.objectStreams, inNewDirectory: "pdf-attack-usf")
        let signed = directory.path("signed.pdf")
        try await sign(input, signed, .certsign, field: nil, in: directory)
        let forged = directory.path("forged.pdf")
        try PDFAttacks.apply(.forgedSignature(variant), to: signed, writingTo: forged)
        let report = try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: forged), trustAnchors: [pki.root])
        #expect(report.signatures.map(\.field) == ["Signature1", "Forged"])
        let fake = try #require(report.signatures.last)
        #expect(fake.byteRangeProblem != nil && !fake.verification.isValid && !fake.isValid)
        #expect(!report.isValid)
        // For the real signature the forgery is a new signature field (what a countersignature adds).
        let real = try #require(report.signatures.first)
        #expect(real.laterChanges == .signatures && real.isValid, "\(real.changes)")
        let verdicts = try PDFChangeFixtures.pyhankoVerdicts(forged, root: pki.root, in: directory)
        #expect(verdicts.count == 1 && verdicts[0].field == "*" && verdicts[0].error != nil, "\(verdicts)")
    }

    @Test("an update whose /Prev names itself: the chain's loop is reported as a change, not followed forever")
    func previousLoop() async throws {
        let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-attack-loop")
        let signed = directory.path("signed.pdf")
        try await sign(input, signed, .certsign, field: nil, in: directory)
        let attacked = directory.path("attacked.pdf")
        try PDFAttacks.apply(.previousLoop, to: signed, writingTo: attacked)
        let report = try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: attacked), trustAnchors: [pki.root])
        let signature = try #require(report.signatures.first)
        #expect(signature.verification.isValid && !signature.isValid && !signature.laterRevisionsSigned)
        #expect(signature.changes.contains { $0.text.contains("loops") && !$0.isAllowed }, "\(signature.changes)")
        let verdicts = try PDFChangeFixtures.pyhankoVerdicts(attacked, root: pki.root, in: directory)
        #expect(verdicts.first?.error?.contains("loop") == true, "\(verdicts)")
    }
}
