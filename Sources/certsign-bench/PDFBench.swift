import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import TestSupport

/// PDFSigning's figures: PAdES signing of a 64 MiB PDF (`--pdf-mib`) against
/// `openssl dgst -sha256` of the same file in the same run, and the peak RSS of a fresh child
/// process doing only that (flat memory: far below the file size).
///
/// The goal for the time: at most 3× `openssl dgst -sha256` (ratio ≥ 1/3). Signing reads the file
/// twice (the copy into the output, then the ByteRange hash) and writes and syncs it once;
/// `openssl dgst` reads it once.
let pdfSigningGoal = 1.0 / 3.0

func runPDFBenchmarks(_ harness: BenchHarness) async throws {
    if let child = harness.options.pdfChild {
        await PDFBench.runChild(child, harness: harness)
    }
    let mebibytes = harness.options.pdfMiB
    let file = harness.scratch.appendingPathComponent("large-\(mebibytes)MiB.pdf")
    try TestPDF.writeLarge(to: file, mebibytes: mebibytes)
    defer { try? FileManager.default.removeItem(at: file) }
    guard let executable = Bundle.main.executablePath else {
        throw BenchError("cannot locate certsign-bench for the child runs")
    }
    var seconds: [Double] = []
    var peaks: [Double] = []
    for index in 0...harness.repetitions {
        let result = try harness.runCommand(
            executable,
            ["1", "--suites", "pdf", "--pdf-child", file.path]
        )
        guard result.status == 0,
            let line = result.output.split(separator: "\n").first(where: { $0.hasPrefix("PDF-CHILD") })
        else {
            throw BenchError("PDF signing child failed: \(result.error)")
        }
        var values: [String: Double] = [:]
        for field in line.split(separator: " ").dropFirst() {
            let parts = field.split(separator: "=")
            if parts.count == 2 { values[String(parts[0])] = Double(parts[1]) }
        }
        guard let time = values["seconds"], let rss = values["maxrss_kib"] else {
            throw BenchError("unreadable child output: \(line)")
        }
        if index > 0 {
            seconds.append(time)
            peaks.append(rss / 1024)
        }
    }
    let baseline = try harness.timeCommand("openssl", ["dgst", "-sha256", file.path])
    harness.record(
        "sign \(mebibytes) MiB PDF (PAdES B-B, SHA-256)",
        ours: Sample(values: seconds),
        baseline: baseline,
        baselineName: "openssl dgst -sha256 (same file)",
        unit: .seconds,
        goal: pdfSigningGoal,
        higherIsBetter: false
    )
    harness.record(
        "peak RSS signing \(mebibytes) MiB PDF",
        ours: Sample(values: peaks),
        baseline: Sample(64),
        baselineName: "limit 64 MiB",
        unit: .mebibytes,
        goal: 1,
        higherIsBetter: false
    )
}

enum PDFBench {
    /// The child side: sign the PDF once (output beside it, removed), print time and peak RSS, exit.
    static func runChild(_ path: String, harness: BenchHarness) async -> Never {
        do {
            let pki = try TestPKI()
            let identity = try pki.issueLeaf(subject: "CN=PDF Bench Signer", keyType: .rsa2048)
            let output = URL(fileURLWithPath: path + ".signed-\(getpid()).pdf")
            let start = DispatchTime.now().uptimeNanoseconds
            try await PDFSigner.sign(pdfAt: URL(fileURLWithPath: path), writingTo: output, identity: identity)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            try? FileManager.default.removeItem(at: output)
            print("PDF-CHILD seconds=\(seconds) maxrss_kib=\(usage.ru_maxrss)")
            try? FileManager.default.removeItem(at: harness.scratch)
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("PDF signing child: \(error)\n".utf8))
            try? FileManager.default.removeItem(at: harness.scratch)
            exit(1)
        }
    }
}
