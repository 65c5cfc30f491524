import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import TestSupport

/// `--suites pdf-revisions`: verifying a signed PDF with 3000 incremental updates after its
/// signature (each redefines the `/Info` dictionary, an LTV-class change), so the change analysis
/// compares 3000 pairs of revisions; once with classic cross-reference tables, once with
/// cross-reference streams after a file whose objects lie in object streams (qpdf
/// `--object-streams=generate`). The goal: under 2 s on the bench machine, which needs the analysis
/// to be linear in the number of revisions; a note gives the wall and processor time for fewer
/// revisions too, so the curve shows on a busy machine.
let pdfRevisionsCount = 3000
let pdfRevisionsGoalSeconds = 2.0

func runPDFRevisionsBenchmark(_ harness: BenchHarness) async throws {
    let pki = try TestPKI()
    let identity = try pki.issueLeaf(subject: "CN=PDF Revisions Bench", keyType: .rsa2048)
    for kind in PDFRevisionsBench.Kind.allCases {
        let signed = try await PDFRevisionsBench.signed(kind, identity: identity, harness)
        var curve: [String] = []
        for count in [500, 1000, 2000, pdfRevisionsCount] {
            let updated = harness.scratch.appendingPathComponent("revisions-\(kind)-\(count).pdf")
            guard let chain = PDFUpdateChain.appending(to: signed, count: count, sections: kind.sections) else {
                throw BenchError("the signed \(kind) PDF's last trailer cannot be read")
            }
            try Data(chain).write(to: updated)
            var verdict = ""
            let load = SuiteRun.loadAverage()
            let cpu = PDFRevisionsBench.processorSeconds()
            let sample = try await harness.time(warmUp: false) {
                let report = try PDFSignatureVerifier.verify(pdfAt: updated, trustAnchors: [pki.root.certificate])
                verdict = report.signatures.first.map { "\($0.laterChanges) \($0.isValid)" } ?? "no signature"
            }
            let cpuPerRun = (PDFRevisionsBench.processorSeconds() - cpu) / Double(harness.repetitions)
            guard verdict == "ltv true" else { throw BenchError("the \(count)-revision \(kind) PDF: \(verdict)") }
            curve.append(String(format: "%d: %.3f s, CPU %.3f s (load %@)", count, sample.median, cpuPerRun, load))
            guard count == pdfRevisionsCount else { continue }
            harness.record(
                "verify a PDF with \(count) revisions after its signature (\(kind.label))",
                ours: sample,
                baseline: Sample(pdfRevisionsGoalSeconds),
                baselineName: "goal \(Int(pdfRevisionsGoalSeconds)) s",
                unit: .seconds,
                goal: 1,
                higherIsBetter: false
            )
        }
        harness.note(
            "\(kind.label): seconds (wall, and CPU of this process, which a busy machine does not stretch) by "
                + "revisions after the signature: \(curve.joined(separator: "; "))"
        )
    }
}

enum PDFRevisionsBench {
    /// The processor seconds (user and system) this process has used so far.
    static func processorSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec
        return Double(seconds) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// How the updates (and the file before them) write their cross-reference sections.
    enum Kind: String, CaseIterable, CustomStringConvertible {
        case classic, xrefStreams
        var description: String { rawValue }
        var sections: PDFUpdateChain.Sections { self == .classic ? .tables : .streams }
        var label: String {
            self == .classic ? "classic xref tables" : "xref streams, objects in object streams"
        }
    }

    /// A small PDF signed once: classic, or first rewritten by qpdf with object streams (the
    /// signature's update then a cross-reference stream too).
    static func signed(_ kind: Kind, identity: SigningIdentity, _ harness: BenchHarness) async throws -> [UInt8] {
        let input = harness.scratch.appendingPathComponent("revisions-input-\(kind).pdf")
        let signed = harness.scratch.appendingPathComponent("revisions-signed-\(kind).pdf")
        try Data(TestPDF.minimal()).write(to: input)
        if kind == .xrefStreams {
            let compressed = harness.scratch.appendingPathComponent("revisions-compressed.pdf")
            let result = try harness.runCommand("qpdf", ["--object-streams=generate", input.path, compressed.path])
            guard result.status == 0 else { throw BenchError("qpdf --object-streams=generate: \(result.error)") }
            try FileManager.default.removeItem(at: input)
            try FileManager.default.moveItem(at: compressed, to: input)
        }
        try await PDFSigner.sign(pdfAt: input, writingTo: signed, identity: identity)
        return [UInt8](try Data(contentsOf: signed))
    }
}
