import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PDFSigning
import TestSupport

/// `certsign verify` over many files in one call, each against pyHanko doing the
/// same validation in a loop in one Python process, measured alternately in the same run:
/// - 2000 detached P-256 CAdES `.p7s` of 1 KiB documents (`--content-dir`) vs
///   `async_validate_detached_cms`: goal ≥ 5×;
/// - 200 signed 1 MiB PDFs (two revisions each: the document and its signature) vs
///   `async_validate_pdf_signature`: goal ≥ 3×.
///
/// Both sides trust the same root and check the chain; pyHanko keeps one `ValidationContext` for
/// the whole loop (its caches help it). `--verify-documents` and
/// `--verify-pdfs` change the counts.
func runVerifyBenchmarks(_ harness: BenchHarness) async throws {
    guard let certsign = harness.certsignBesideBench(skipping: "verify rows") else { return }
    guard try harness.runCommand("python3", ["-c", "import pyhanko"]).status == 0 else {
        harness.note("verify rows skipped: pyHanko is not installed (make deps installs it)")
        return
    }
    let bench = try VerifyBench(harness: harness, certsign: certsign)
    try await bench.detachedRow()
    try await bench.pdfRow()
}

struct VerifyBench {
    let harness: BenchHarness
    let certsign: String
    let directory: URL
    let pki: TestPKI
    let root: String
    let environment: [String: String]

    init(harness: BenchHarness, certsign: String) throws {
        self.harness = harness
        self.certsign = certsign
        directory = harness.scratch.appendingPathComponent("verify")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        pki = try TestPKI(rootSubject: "CN=Verify Bench Root")
        root = directory.appendingPathComponent("root.pem").path
        try pki.root.certificate.pemRepresentation.write(toFile: root, atomically: true, encoding: .utf8)
        environment = ["CERTSIGN_HOME": directory.appendingPathComponent("home").path, "P12PASS": "bench-password-1"]
    }

    static let pythonDetached = """
        import asyncio, os, sys
        from asn1crypto import cms
        from pyhanko.keys import load_cert_from_pemder
        from pyhanko.sign.validation import async_validate_detached_cms
        from pyhanko_certvalidator import ValidationContext
        async def main():
            context = ValidationContext(trust_roots=[load_cert_from_pemder(sys.argv[1])])
            valid = 0
            names = sorted(os.listdir(sys.argv[2]))
            for name in names:
                with open(os.path.join(sys.argv[2], name), "rb") as f:
                    signed_data = cms.ContentInfo.load(f.read())["content"]
                with open(os.path.join(sys.argv[3], name[: -len(".p7s")]), "rb") as f:
                    document = f.read()
                status = await async_validate_detached_cms(document, signed_data, signer_validation_context=context)
                valid += 1 if status.bottom_line else 0
            print(valid, len(names))
        asyncio.run(main())
        """

    static let pythonPDF = """
        import asyncio, sys
        from pyhanko.keys import load_cert_from_pemder
        from pyhanko.pdf_utils.reader import PdfFileReader
        from pyhanko.sign.validation import async_validate_pdf_signature
        from pyhanko_certvalidator import ValidationContext
        async def main():
            context = ValidationContext(trust_roots=[load_cert_from_pemder(sys.argv[1])])
            valid = 0
            for path in sys.argv[2:]:
                with open(path, "rb") as f:
                    signatures = PdfFileReader(f).embedded_signatures
                    results = [await async_validate_pdf_signature(s, context) for s in signatures]
                valid += 1 if results and all(r.bottom_line for r in results) else 0
            print(valid, len(sys.argv) - 2)
        asyncio.run(main())
        """

    /// Runs `command` once and returns documents per second; its output must say "N N" (Python) or
    /// the command must exit 0 (certsign: every signature valid).
    func rate(_ command: String, _ arguments: [String], count: Int) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try harness.runCommand(command, arguments, environment: environment)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard result.status == 0 else {
            throw BenchError("\(command) failed: \(result.error.prefix(400))\(result.output.suffix(400))")
        }
        if command == "python3" {
            let expected = "\(count) \(count)"
            guard result.output.trimmingCharacters(in: .whitespacesAndNewlines) == expected else {
                throw BenchError("pyHanko found \(result.output) valid, expected \(expected)")
            }
        }
        return Double(count) / seconds
    }

    /// Alternates ours and pyHanko's loop and records the row.
    func measure(_ name: String, ours: [String], python: [String], count: Int, goal: Double) throws {
        var oursRates: [Double] = []
        var pythonRates: [Double] = []
        var loads: [String] = []
        for _ in 0..<max(3, min(harness.repetitions, 5)) {
            loads.append(SuiteRun.loadAverage())
            oursRates.append(try rate(certsign, ours, count: count))
            pythonRates.append(try rate("python3", python, count: count))
        }
        harness.record(
            name,
            ours: Sample(values: oursRates),
            baseline: Sample(values: pythonRates),
            baselineName: "pyHanko loop docs/s (one process)",
            unit: .perSecond,
            goal: goal,
            higherIsBetter: true
        )
        harness.note("\(name): 1-minute load average before each round: \(loads.joined(separator: ", "))")
    }

    /// 2000 detached P-256 signatures made by `certsign sign --p12 … --out-dir`, then verified.
    func detachedRow() async throws {
        let count = harness.options.verifyDocuments
        let documents = directory.appendingPathComponent("documents")
        let signatures = directory.appendingPathComponent("signatures")
        for folder in [documents, signatures] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        var paths: [String] = []
        for index in 0..<count {
            let path = documents.appendingPathComponent(String(format: "doc-%05d.txt", index)).path
            let bytes = (0..<1024).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ index) }
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
                throw BenchError("cannot write \(path)")
            }
            paths.append(path)
        }
        let identity = try pki.issueLeaf(subject: "CN=Verify Bench P-256", keyType: .p256)
        guard let local = identity.key as? LocalSigningKey else { throw BenchError("no local key") }
        let key = directory.appendingPathComponent("p256.key").path
        let certificate = directory.appendingPathComponent("p256.pem").path
        let p12 = directory.appendingPathComponent("p256.p12").path
        try local.pemRepresentation(password: nil).write(toFile: key, atomically: true, encoding: .utf8)
        try identity.certificate.pemRepresentation.write(toFile: certificate, atomically: true, encoding: .utf8)
        let export = try harness.runCommand(
            "openssl",
            ["pkcs12", "-export", "-inkey", key, "-in", certificate, "-out", p12, "-passout", "env:P12PASS"],
            environment: environment
        )
        guard export.status == 0 else { throw BenchError("openssl pkcs12 failed: \(export.error)") }
        let sign = try harness.runCommand(
            certsign,
            ["sign"] + paths + ["--p12", p12, "--password-env", "P12PASS", "--out-dir", signatures.path],
            environment: environment
        )
        guard sign.status == 0 else { throw BenchError("certsign sign failed: \(sign.error.prefix(400))") }
        let made = try FileManager.default.contentsOfDirectory(atPath: signatures.path).sorted().map {
            signatures.appendingPathComponent($0).path
        }
        guard made.count == count else { throw BenchError("certsign made \(made.count) of \(count) signatures") }
        try measure(
            "certsign verify \(count) detached P-256 .p7s (one call)",
            ours: ["verify"] + made + ["--content-dir", documents.path, "--ca", root],
            python: ["-c", Self.pythonDetached, root, signatures.path, documents.path],
            count: count,
            goal: 5
        )
    }

    /// 200 PDFs of 1 MiB, each signed once (PAdES B-B, RSA-2048), then verified.
    func pdfRow() async throws {
        let count = harness.options.verifyPDFs
        let folder = directory.appendingPathComponent("pdfs")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let original = directory.appendingPathComponent("original.pdf")
        try TestPDF.writeLarge(to: original, mebibytes: 1)
        let identity = try pki.issueLeaf(subject: "CN=Verify Bench PDF", keyType: .rsa2048)
        var paths: [String] = []
        for index in 0..<count {
            let output = folder.appendingPathComponent(String(format: "signed-%04d.pdf", index))
            try await PDFSigner.sign(pdfAt: original, writingTo: output, identity: identity)
            paths.append(output.path)
        }
        try measure(
            "certsign verify \(count) signed 1 MiB PDFs (one call)",
            ours: ["verify"] + paths + ["--ca", root],
            python: ["-c", Self.pythonPDF, root] + paths,
            count: count,
            goal: 3
        )
    }
}
