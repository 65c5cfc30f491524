import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import TestSupport

/// `--suites pdf-revisions`: verifying a signed PDF with 3000 incremental updates after its
/// signature (each redefines the `/Info` dictionary, an LTV-class change), so the change analysis
/// compares 3000 pairs of revisions. The goal: under 2 s on the bench machine, which needs the
/// analysis to be linear in the number of revisions.
let pdfRevisionsCount = 3000
let pdfRevisionsGoalSeconds = 2.0

func runPDFRevisionsBenchmark(_ harness: BenchHarness) async throws {
    let input = harness.scratch.appendingPathComponent("revisions-input.pdf")
    let signed = harness.scratch.appendingPathComponent("revisions-signed.pdf")
    try Data(TestPDF.minimal()).write(to: input)
    let pki = try TestPKI()
    let identity = try pki.issueLeaf(subject: "CN=PDF Revisions Bench", keyType: .rsa2048)
    try await PDFSigner.sign(pdfAt: input, writingTo: signed, identity: identity)
    let updated = harness.scratch.appendingPathComponent("revisions-\(pdfRevisionsCount).pdf")
    try Data(PDFRevisionsBench.appendInfoUpdates(to: [UInt8](Data(contentsOf: signed)), count: pdfRevisionsCount))
        .write(to: updated)
    var verdict = ""
    let sample = try await harness.time(warmUp: false) {
        let report = try PDFSignatureVerifier.verify(pdfAt: updated, trustAnchors: [pki.root.certificate])
        verdict = report.signatures.first.map { "\($0.laterChanges) \($0.isValid)" } ?? "no signature"
    }
    guard verdict == "ltv true" else { throw BenchError("the \(pdfRevisionsCount)-revision PDF: \(verdict)") }
    harness.record(
        "verify a PDF with \(pdfRevisionsCount) revisions after its signature",
        ours: sample,
        baseline: Sample(pdfRevisionsGoalSeconds),
        baselineName: "goal \(Int(pdfRevisionsGoalSeconds)) s",
        unit: .seconds,
        goal: 1,
        higherIsBetter: false
    )
}

enum PDFRevisionsBench {
    /// `pdf` with `count` classic cross-reference sections appended, each redefining one new
    /// object as the trailer's `/Info` (`<< /Title (Revision N) >>`).
    static func appendInfoUpdates(to pdf: [UInt8], count: Int) throws -> [UInt8] {
        let text = String(decoding: pdf.suffix(4096), as: UTF8.self)
        guard let root = text.matches(of: #/\/Root\s+(\d+)\s+(\d+)\s+R/#).last,
            let size = text.matches(of: #/\/Size\s+(\d+)/#).last.flatMap({ Int($0.1) }),
            let last = text.matches(of: #/startxref\s+(\d+)/#).last.flatMap({ Int($0.1) })
        else { throw BenchError("the signed PDF's last trailer cannot be read") }
        var out = pdf
        if out.last != 0x0A { out.append(0x0A) }
        var previous = last
        for index in 0..<count {
            let offset = out.count
            out += Array("\(size) 0 obj\n<< /Title (Revision \(index)) >>\nendobj\n".utf8)
            let start = out.count
            let entry = String(repeating: "0", count: 10 - String(offset).count) + String(offset)
            out += Array("xref\n0 1\n0000000000 65535 f\r\n\(size) 1\n\(entry) 00000 n\r\n".utf8)
            out += Array(
                ("trailer\n<< /Size \(size + 1) /Root \(root.1) \(root.2) R /Info \(size) 0 R /Prev \(previous) >>\n"
                    + "startxref\n\(start)\n%%EOF\n").utf8
            )
            previous = start
        }
        return out
    }
}
