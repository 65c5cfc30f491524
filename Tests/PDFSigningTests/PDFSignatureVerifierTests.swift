import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import Signing
import TestSupport
import Testing

@Suite("PDFSignatureVerifier: every signature, its revision, later changes, the CMS under the validation policy")
struct PDFSignatureVerifierTests {
    let pki: PDFPKI
    init() throws { pki = try PDFPKI(sharedBy: .pdfSuites) }

    /// Signs a fresh `variant` PDF with the RSA key into `signed.pdf`.
    /// - Returns: the directory, the signed file and the signer's result.
    func signedPDF(
        _ variant: PDFFixtures.Variant,
        inNewDirectory prefix: String
    ) async throws -> (directory: TemporaryDirectory, signed: URL, result: PDFSigningResult) {
        let (directory, input) = try PDFFixtures.make(variant, inNewDirectory: prefix)
        let (signed, result) = try await directory.signPDF(input, into: "signed.pdf", identity: pki.rsa)
        return (directory, URL(fileURLWithPath: signed), result)
    }

    @Test("two signatures of ours: both valid, the first covers revision 1 and is followed by a signed revision")
    func countersigned() async throws {
        let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-verify")
        let options = PDFSignatureOptions(reason: "Автор")
        let first = try await directory.signPDF(input, into: "first.pdf", identity: pki.rsa, options: options).path
        let external = try PDFPKI.external(pki.ec)
        let secondPath = try await directory.signPDF(first, into: "second.pdf", identity: external).path
        let second = URL(fileURLWithPath: secondPath)
        let report = try PDFSignatureVerifier.verify(pdfAt: second, trustAnchors: [pki.root])
        #expect(report.isValid)
        #expect(report.revisionCount == 3)
        #expect(report.signatures.map(\.field) == ["Signature1", "Signature2"])
        #expect(report.signatures.map(\.revision) == [2, 3])
        #expect(report.signatures.map(\.coversWholeFile) == [false, true])
        #expect(report.signatures.map(\.laterChanges) == [.signatures, .none])
        #expect(report.signatures.allSatisfy { $0.laterRevisionsSigned })
        #expect(report.signatures.map(\.subFilter) == ["ETSI.CAdES.detached", "ETSI.CAdES.detached"])
        #expect(report.signatures[0].reason == "Автор")
        #expect(report.signatures[0].verification.signerCertificate == pki.rsa.certificate)
        #expect(report.signatures[1].verification.signerCertificate == pki.ec.certificate)
        #expect(report.signatures.allSatisfy { $0.claimedTime != nil && $0.verification.signingTime == nil })
        #expect(!report.hasUnsignedChanges)
        // Without trust anchors the CMS verifies but the chain is not checked; an unrelated root fails it.
        let other = try TestPKI(rootSubject: "CN=Unrelated Root")
        let untrusted = try PDFSignatureVerifier.verify(pdfAt: second, trustAnchors: [other.root.certificate])
        #expect(untrusted.signatures.allSatisfy { $0.verification.failure?.code == .untrustedSigner })
    }

    @Test("accepts pyHanko-made PAdES")
    func acceptsPyHanko() async throws {
        let (directory, input) = try PDFFixtures.make(.objectStreams, inNewDirectory: "pdf-verify-pyhanko")
        let signed = directory.path("pyhanko.pdf")
        try PDFFixtures.pyhankoSign(input, output: signed, identity: pki.rsa, field: "PyHankoSig", in: directory)
        let report = try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: signed), trustAnchors: [pki.root])
        #expect(report.isValid, "\(report.signatures.map { "\($0.byteRangeProblem ?? "") \($0.verification)" })")
        #expect(report.signatures.map(\.field) == ["PyHankoSig"])
        #expect(report.signatures.first?.coversWholeFile == true)
    }

    @Test("rejects a PDF changed inside a signed range")
    func rejectsChangeInsideSignedRange() async throws {
        let (directory, input) = try PDFFixtures.make(.classic, inNewDirectory: "pdf-verify-tamper")
        let signedPath = try await directory.signPDF(input, into: "signed.pdf", identity: pki.rsa).path
        let signed = URL(fileURLWithPath: signedPath)
        var bytes = try Data(contentsOf: signed)
        // The first page's MediaBox (in the original revision, which the signature covers): 595 -> 596.
        let marker = try #require(bytes.range(of: Data("595".utf8)))
        #expect(marker.lowerBound < 1_000)
        bytes[marker.lowerBound + 2] = UInt8(ascii: "6")
        try bytes.write(to: signed)
        let report = try PDFSignatureVerifier.verify(pdfAt: signed, trustAnchors: [pki.root])
        #expect(!report.isValid)
        #expect(report.signatures.first?.verification.failure?.code == .contentChanged)
        #expect(report.signatures.first?.byteRangeProblem == nil)
        // pdfsig agrees that the file is no longer the signed one.
        #expect(!(try PDFFixtures.pdfsig(signed.path)).contains("Signature is Valid."))
    }

    @Test("reports a later unsigned revision")
    func reportsUnsignedRevision() async throws {
        let (directory, signed, _) = try await signedPDF(.objectStreams, inNewDirectory: "pdf-verify-later")
        let changed = directory.path("changed.pdf")
        try PDFFixtures.appendUnsignedRevision(signed.path, output: changed)
        let report = try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: changed), trustAnchors: [pki.root])
        let signature = try #require(report.signatures.first)
        #expect(signature.verification.isValid)
        #expect(signature.coversWholeFile == false)
        // The later revision changes the catalog's /Lang: another change, and no signature covers it.
        #expect(signature.laterChanges == .other)
        #expect(signature.laterChangesDetail?.contains("/Lang") == true, "\(signature.laterChangesDetail ?? "")")
        #expect(!signature.laterRevisionsSigned)
        #expect(report.hasUnsignedChanges)
        #expect(report.revisionCount == signature.revision + 1)
    }

    @Test("a PDF without signatures gives an empty, invalid report")
    func unsigned() throws {
        let directory = try TemporaryDirectory(prefix: "pdf-verify-none")
        let input = URL(fileURLWithPath: try PDFFixtures.make(.linearized, in: directory))
        let report = try PDFSignatureVerifier.verify(pdfAt: input, trustAnchors: [pki.root])
        #expect(report.signatures.isEmpty && !report.isValid)
    }

    @Test("a ByteRange that stops short of the %%EOF is reported, and one whose gap is not /Contents too")
    func insaneByteRange() async throws {
        let (directory, signed, result) = try await signedPDF(.classic, inNewDirectory: "pdf-verify-byterange")
        let original = try Data(contentsOf: signed)
        let text = "0 \(result.byteRange[1]) \(result.byteRange[2]) \(result.byteRange[3])"
        let location = try #require(original.range(of: Data(text.utf8)))

        // Rewrites the /ByteRange in place (same number of digits, so the file keeps its layout) and
        // verifies the result.
        func verifyWithByteRange(_ range: [Int], name: String) throws -> PDFVerificationReport {
            var changed = original
            let replacement = range.map(String.init).joined(separator: " ")
            try #require(replacement.utf8.count == text.utf8.count)
            changed.replaceSubrange(location, with: Data(replacement.utf8))
            let path = URL(fileURLWithPath: try directory.write(name, changed))
            return try PDFSignatureVerifier.verify(pdfAt: path, trustAnchors: [pki.root])
        }
        let range = result.byteRange.map { Int($0) }

        // The covered range ends 10 bytes early.
        let short = try verifyWithByteRange([0, range[1], range[2], range[3] - 10], name: "short.pdf")
        #expect(short.signatures.first?.byteRangeProblem?.contains("%%EOF") == true)
        #expect(!short.isValid)

        // The gap starts one byte late: it is no longer exactly the /Contents string.
        let shifted = try verifyWithByteRange([0, range[1] + 1, range[2], range[3]], name: "shifted.pdf")
        #expect(shifted.signatures.first?.byteRangeProblem?.contains("/Contents") == true)
        #expect(!shifted.isValid)
    }
}
