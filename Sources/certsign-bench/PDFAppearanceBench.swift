import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport

/// Visible PAdES signatures: `certsign sign` of 200 PDFs of 1 MiB (`--appearance-pdfs N`) in one
/// call with a text+image appearance (the default text in DejaVu Sans, shaped and embedded as a
/// subset, and a 128 × 128 PNG seal with alpha), against pyHanko signing the same PDFs with a text
/// stamp (`TextStampStyle`, its built-in font) in a loop in one Python process: goal ≥ 3×. Both use
/// the same RSA-2048 key from the same `.p12` (loaded once by each) and write one signed PDF per
/// input. A second row puts the appearance beside an invisible signature of the same PDFs by the
/// same `certsign` (the appearance's cost; no goal). The three are measured in alternating rounds.
func runPDFAppearanceBenchmarks(_ harness: BenchHarness) async throws {
    guard let certsign = harness.certsignBesideBench(skipping: "pdf-appearance rows") else { return }
    guard try harness.runCommand("python3", ["-c", "import pyhanko"]).status == 0 else {
        harness.note("pdf-appearance rows skipped: pyHanko is not installed (make deps installs it)")
        return
    }
    let directory = try TemporaryDirectory(prefix: "certsign-bench-appearance")
    let count = harness.options.appearancePDFs
    let original = directory.url.appendingPathComponent("original.pdf")
    try TestPDF.writeLarge(to: original, mebibytes: 1)
    let inputs = directory.url.appendingPathComponent("inputs")
    try FileManager.default.createDirectory(at: inputs, withIntermediateDirectories: true)
    let paths = try (0..<count).map { index in
        let path = inputs.appendingPathComponent(String(format: "contract-%04d.pdf", index)).path
        try FileManager.default.copyItem(atPath: original.path, toPath: path)
        return path
    }
    let password = "bench-password-1"
    let environment = ["CERTSIGN_HOME": directory.path("home"), "P12PASS": password]
    let pki = try TestPKI(rootSubject: "CN=Appearance Bench Root")
    let identity = try pki.issueLeaf(subject: "CN=Appearance Bench Signer,O=Bench", keyType: .rsa2048)
    let p12 = directory.path("signer.p12")
    try OpenSSLPKCS12.export(identity, password: password, to: p12, in: directory)
    let seal = try TestImages.sealPNG(size: 128, in: directory)

    let key = ["--format", "pades", "--p12", p12, "--password-env", "P12PASS"]
    let visible = ["--appearance", "text+image", "--image", seal, "--rect", "300,80,560,160"]
    var appearance: [Double] = []
    var invisible: [Double] = []
    var python: [Double] = []
    var loads: [String] = []
    for round in 0..<max(3, min(harness.repetitions, 5)) {
        loads.append(SuiteRun.loadAverage())
        func output(_ name: String) -> URL { directory.url.appendingPathComponent("\(name)-\(round)") }
        func rate(_ command: String, _ arguments: [String], _ name: String) throws -> Double {
            defer { try? FileManager.default.removeItem(at: output(name)) }
            return try harness.documentsPerSecond(
                command,
                arguments,
                environment: environment,
                output: output(name),
                count: count
            )
        }
        let outDir = { (name: String) in ["--out-dir", output(name).path] }
        appearance.append(try rate(certsign, ["sign"] + paths + key + visible + outDir("visible"), "visible"))
        invisible.append(try rate(certsign, ["sign"] + paths + key + outDir("invisible"), "invisible"))
        let script = ["-c", pyHankoStampLoop, p12, output("python").path] + paths
        python.append(try rate("python3", script, "python"))
    }
    let name = "certsign sign \(count) × 1 MiB PDF, text+image appearance (one call, fsync)"
    harness.record(
        name,
        ours: Sample(values: appearance),
        baseline: Sample(values: python),
        baselineName: "pyHanko text stamp loop docs/s (one process)",
        unit: .perSecond,
        goal: 3,
        higherIsBetter: true
    )
    harness.record(
        "certsign sign \(count) × 1 MiB PDF: text+image appearance vs invisible",
        ours: Sample(values: appearance),
        baseline: Sample(values: invisible),
        baselineName: "certsign sign, invisible docs/s",
        unit: .perSecond,
        higherIsBetter: true
    )
    harness.note("\(name): 1-minute load average before each round: \(loads.joined(separator: ", "))")
}

/// pyHanko signs each PDF (argv[3:]) into the directory argv[2] with a text stamp in a new visible
/// field at the same rectangle, the key loaded once from the `.p12` argv[1] (password in P12PASS).
private let pyHankoStampLoop = """
    import os, sys
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import signers
    from pyhanko.sign.fields import SigFieldSpec, SigSeedSubFilter
    from pyhanko.stamp import TextStampStyle
    signer = signers.SimpleSigner.load_pkcs12(sys.argv[1], passphrase=os.environ['P12PASS'].encode())
    meta = signers.PdfSignatureMetadata(field_name='Signature1', subfilter=SigSeedSubFilter.PADES)
    style = TextStampStyle(stamp_text='Digitally signed by %(signer)s\\nDate: %(ts)s')
    field = SigFieldSpec('Signature1', on_page=0, box=(300, 80, 560, 160))
    pdf_signer = signers.PdfSigner(meta, signer=signer, stamp_style=style, new_field_spec=field)
    for path in sys.argv[3:]:
        name = os.path.basename(path)[:-len('.pdf')] + '-signed.pdf'
        with open(path, 'rb') as f, open(os.path.join(sys.argv[2], name), 'wb') as out:
            pdf_signer.sign_pdf(IncrementalPdfFileWriter(f), output=out)
    """
