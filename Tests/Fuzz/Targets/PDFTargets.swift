import CertificateProviders
import Foundation
import PDFSigning
import Signing

enum PDFTargets {
    /// One scratch file per fuzzing process: the verifier reads PDFs from disk (qpdf and
    /// positional reads), so each input is written there first.
    static let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
        "certsign-fuzz-pdf-\(getpid()).pdf"
    )

    /// Lists and verifies every signature of the input as a PDF: the signature reader's trailer,
    /// xref walk (qpdf), field walk, ByteRange checks and revision markers, then the CMS.
    static func verify(_ input: [UInt8]) -> String {
        do {
            try Data(input).write(to: scratch)
            let report = try PDFSignatureVerifier.verify(pdfAt: scratch, trustAnchors: CMSTargets.trustAnchors)
            return "\(report.signatures.count) signatures, \(report.revisionCount) revisions, valid \(report.isValid): "
                + report.signatures.map {
                    "\($0.field) r\($0.revision) \($0.laterChanges) \($0.byteRangeProblem ?? "") \($0.verification)"
                }.joined(separator: "; ")
        } catch {
            return "\(error)"
        }
    }
}
