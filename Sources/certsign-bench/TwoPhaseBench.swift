import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport

/// Two-phase signing (`certsign prepare`, a signer outside the package, `certsign complete`):
///
/// - 2000 CAdES documents of 1 KiB (`--two-phase-documents N`): prepare, an outside signer that signs
///   every prepared `dataToSign` (``OutsideSigner``, a C program on libcrypto: the key loaded once,
///   then one forked process per core, as `certsign sign` signs on every core; one `.sig` file per
///   document), then complete, timed together, against one plain `certsign sign` of the same
///   documents with the same key from the same `.p12`: goal ≥ 0.5×. The same flow with a Python
///   signer on `cryptography` (the same forking; its interpreter and `cryptography`'s import alone
///   take about 0.2 s of CPU) is a row for information;
/// - 200 PDFs of 1 MiB (`--two-phase-pdfs N`): the same three steps with `--format pades`, against
///   pyHanko's interrupted signing in a loop in one Python process (`async_digest_doc_for_signing`,
///   the signed attributes signed by the same key, `ExternalSigner`, `async_finish_signing`): goal ≥ 3×.
///
/// The flows are measured in alternating rounds, each writing one signature per document.
func runTwoPhaseBenchmarks(_ harness: BenchHarness) async throws {
    guard let certsign = harness.certsignBesideBench(skipping: "two-phase rows") else { return }
    guard try harness.runCommand("python3", ["-c", "import cryptography, pyhanko"]).status == 0 else {
        harness.note("two-phase rows skipped: Python cryptography or pyHanko is not installed (make deps)")
        return
    }
    let setup = try TwoPhaseSetup(harness)
    try measureTwoPhaseCAdES(harness, certsign: certsign, setup)
    try measureTwoPhasePAdES(harness, certsign: certsign, setup)
}

/// The key (a `.p12` and its certificate as PEM) both flows and their baselines share.
private struct TwoPhaseSetup {
    let directory: TemporaryDirectory
    let p12: String
    let certificate: String
    let environment: [String: String]
    /// The outside signers, each a command that takes the `.p12`, the `prepare --json` output and the
    /// directory for the `.sig` files: the C program on libcrypto (the measured flows; nil when `cc`
    /// cannot build it) and the Python one on `cryptography`.
    let cSigner: [String]?
    let pythonSigner: [String]
    /// The signer of the measured flows: the C one, else the Python one.
    var signer: [String] { cSigner ?? pythonSigner }
    /// How the rows name ``signer``.
    var signerName: String { cSigner == nil ? "Python cryptography" : "C, libcrypto" }

    init(_ harness: BenchHarness) throws {
        directory = try TemporaryDirectory(prefix: "certsign-bench-two-phase")
        let password = "bench-password-1"
        environment = ["CERTSIGN_HOME": directory.path("home"), "P12PASS": password]
        let pki = try TestPKI(rootSubject: "CN=Two-Phase Bench Root")
        let identity = try pki.issueLeaf(subject: "CN=Two-Phase Bench Signer,O=Bench", keyType: .rsa2048)
        p12 = directory.path("signer.p12")
        try OpenSSLPKCS12.export(identity, password: password, to: p12, in: directory)
        certificate = directory.path("signer.pem")
        try identity.certificate.pemRepresentation.write(toFile: certificate, atomically: true, encoding: .utf8)
        let script = directory.path("outside-signer.py")
        try outsideSigner.write(toFile: script, atomically: true, encoding: .utf8)
        pythonSigner = ["python3", script]
        cSigner = OutsideSigner.build(harness).map { [$0.path] }
    }

    /// The three steps in one shell: prepare into `work`, sign every value with `signer` (default
    /// ``signer``), complete into `output`.
    func flow(
        _ certsign: String,
        documents: [String],
        format: String,
        work: String,
        output: String,
        signer: [String]? = nil
    ) -> [String] {
        let script = """
            set -e
            certsign=$1 work=$2 out=$3 certificate=$4 p12=$5 signer=$6 format=$7
            shift 7
            rm -rf "$work" && mkdir -p "$work"
            "$certsign" prepare "$@" --certificate "$certificate" --format "$format" --out-dir "$work" --json \
              > "$work/prepared.json"
            $signer "$p12" "$work/prepared.json" "$work"
            "$certsign" complete "$work"/*.pending --signature-value-dir "$work" --out-dir "$out" > /dev/null
            """
        let command = (signer ?? self.signer).joined(separator: " ")
        return ["-c", script, "two-phase", certsign, work, output, certificate, p12, command, format] + documents
    }
}

private func measureTwoPhaseCAdES(_ harness: BenchHarness, certsign: String, _ setup: TwoPhaseSetup) throws {
    let count = harness.options.twoPhaseDocuments
    let paths = try harness.writeDocuments(count, in: setup.directory.url.appendingPathComponent("documents"))
    var twoPhase: [Double] = []
    var pythonTwoPhase: [Double] = []
    var plain: [Double] = []
    // Every round writes into directories of its own, removed after the last round: deleting the
    // last round's thousands of small files is not part of either flow, and on an ext4 without a
    // journal the inodes freed in the last seconds slow the next files' creation.
    let rounds = setup.directory.url.appendingPathComponent("cades-rounds")
    defer { try? FileManager.default.removeItem(at: rounds) }
    /// One round of the flow with `signer`, into directories of the round named `name`.
    func measure(_ name: String, round: Int, signer: [String]) throws -> Double {
        let output = rounds.appendingPathComponent("\(name)-\(round)")
        let work = rounds.appendingPathComponent("\(name)-work-\(round)").path
        let flow = setup.flow(
            certsign,
            documents: paths,
            format: "cades",
            work: work,
            output: output.path,
            signer: signer
        )
        return try harness.documentsPerSecond(
            "bash",
            flow,
            environment: setup.environment,
            output: output,
            count: count
        )
    }
    for round in 0..<max(3, min(harness.repetitions, 5)) {
        twoPhase.append(try measure("two-phase", round: round, signer: setup.signer))
        if setup.cSigner != nil {
            pythonTwoPhase.append(try measure("python", round: round, signer: setup.pythonSigner))
        }
        let signed = rounds.appendingPathComponent("sign-\(round)")
        let sign = ["sign"] + paths + ["--p12", setup.p12, "--password-env", "P12PASS", "--out-dir", signed.path]
        plain.append(
            try harness.documentsPerSecond(certsign, sign, environment: setup.environment, output: signed, count: count)
        )
    }
    harness.record(
        "prepare + outside signer (\(setup.signerName)) + complete, \(count) × 1 KiB CAdES (three processes)",
        ours: Sample(values: twoPhase),
        baseline: Sample(values: plain),
        baselineName: "certsign sign, same key docs/s",
        unit: .perSecond,
        goal: 0.5,
        higherIsBetter: true
    )
    if !pythonTwoPhase.isEmpty {
        harness.record(
            "prepare + outside signer (Python cryptography, information) + complete, \(count) × 1 KiB CAdES",
            ours: Sample(values: pythonTwoPhase),
            baseline: Sample(values: plain),
            baselineName: "certsign sign, same key docs/s",
            unit: .perSecond,
            goal: nil,
            higherIsBetter: true
        )
    }
}

private func measureTwoPhasePAdES(_ harness: BenchHarness, certsign: String, _ setup: TwoPhaseSetup) throws {
    let count = harness.options.twoPhasePDFs
    let original = setup.directory.url.appendingPathComponent("original.pdf")
    try TestPDF.writeLarge(to: original, mebibytes: 1)
    let inputs = setup.directory.url.appendingPathComponent("pdfs")
    try FileManager.default.createDirectory(at: inputs, withIntermediateDirectories: true)
    let paths = try (0..<count).map { index in
        let path = inputs.appendingPathComponent(String(format: "contract-%04d.pdf", index)).path
        try FileManager.default.copyItem(atPath: original.path, toPath: path)
        return path
    }
    var twoPhase: [Double] = []
    var python: [Double] = []
    for round in 0..<max(3, min(harness.repetitions, 5)) {
        let output = setup.directory.url.appendingPathComponent("pades-\(round)")
        defer { try? FileManager.default.removeItem(at: output) }
        let flow = setup.flow(
            certsign,
            documents: paths,
            format: "pades",
            work: setup.directory.path("pades-work"),
            output: output.path
        )
        twoPhase.append(
            try harness.documentsPerSecond("bash", flow, environment: setup.environment, output: output, count: count)
        )
        let loop = ["-c", pyHankoInterruptedLoop, setup.p12, output.path] + paths
        python.append(
            try harness.documentsPerSecond(
                "python3",
                loop,
                environment: setup.environment,
                output: output,
                count: count
            )
        )
    }
    harness.record(
        "prepare + outside signer (\(setup.signerName)) + complete, \(count) × 1 MiB PDF (three processes)",
        ours: Sample(values: twoPhase),
        baseline: Sample(values: python),
        baselineName: "pyHanko interrupted signing loop docs/s (one process)",
        unit: .perSecond,
        goal: 3,
        higherIsBetter: true
    )
}

/// The signer outside the package: reads `prepare --json` (argv[2]), signs each document's
/// `dataToSign` with the `.p12`'s key (argv[1], password in P12PASS; RSA PKCS#1 v1.5 with the prepared
/// digest algorithm) and writes the value as DIR/NAME.sig for NAME.pending (argv[3]). It signs on
/// every core, as `certsign sign` does: the key is loaded once, then one forked process per core
/// signs every n-th document.
private let outsideSigner = """
    import base64, json, os, sys
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding
    from cryptography.hazmat.primitives.serialization import pkcs12
    with open(sys.argv[1], 'rb') as f:
        key, _, _ = pkcs12.load_key_and_certificates(f.read(), os.environ['P12PASS'].encode())
    with open(sys.argv[2]) as f:
        prepared = json.load(f)
    digests = {'sha256': hashes.SHA256(), 'sha384': hashes.SHA384(), 'sha512': hashes.SHA512()}
    def sign(results):
        for result in results:
            if result['status'] != 'prepared' or 'pkcs1' not in result['scheme'].replace('-', '').lower():
                raise ValueError('cannot sign %s (%s)' % (result['document'], result.get('scheme') or result.get('error')))
            value = key.sign(base64.b64decode(result['dataToSignBase64']), padding.PKCS1v15(),
                             digests[result['digestAlgorithm'].replace('-', '').lower()])
            name = os.path.basename(result['pendingFile'])[:-len('.pending')]
            with open(os.path.join(sys.argv[3], name + '.sig'), 'wb') as out:
                out.write(value)
    workers = os.cpu_count() or 1
    children = []
    for worker in range(workers):
        pid = os.fork()
        if pid == 0:
            try:
                sign(prepared['results'][worker::workers])
            except BaseException as error:
                print(error, file=sys.stderr)
                os._exit(1)
            os._exit(0)
        children.append(pid)
    sys.exit(1 if any(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children) else 0)
    """

/// pyHanko's interrupted signing of each PDF (argv[3:]) into the directory argv[2], the key loaded
/// once from the `.p12` argv[1] (password in P12PASS): the document digest and post-sign instructions
/// first, the signed attributes signed by the key as an outside signer would, then the CMS finished by
/// an `ExternalSigner` holding that value and written into the reserved `/Contents`.
private let pyHankoInterruptedLoop = """
    import asyncio, os, sys
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding
    from cryptography.hazmat.primitives.serialization import Encoding, pkcs12
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import signers
    from pyhanko.sign.fields import SigSeedSubFilter
    from pyhanko.sign.signers.pdf_signer import PdfTBSDocument
    from pyhanko_certvalidator.registry import SimpleCertificateStore
    from asn1crypto import x509
    with open(sys.argv[1], 'rb') as f:
        key, cert, _ = pkcs12.load_key_and_certificates(f.read(), os.environ['P12PASS'].encode())
    signing_cert = x509.Certificate.load(cert.public_bytes(Encoding.DER))
    registry = SimpleCertificateStore.from_certs([signing_cert])
    meta = signers.PdfSignatureMetadata(field_name='Signature1', subfilter=SigSeedSubFilter.PADES,
                                        md_algorithm='sha256')
    async def sign(path, out_path):
        placeholder = signers.ExternalSigner(signing_cert, registry, signature_value=256)
        with open(path, 'rb') as f:
            writer = IncrementalPdfFileWriter(f)
            pdf_signer = signers.PdfSigner(meta, signer=placeholder)
            prepared, tbs, output = await pdf_signer.async_digest_doc_for_signing(writer)
        attributes = await placeholder.signed_attrs(prepared.document_digest, 'sha256', use_pades=True)
        value = key.sign(attributes.dump(), padding.PKCS1v15(), hashes.SHA256())
        finisher = signers.ExternalSigner(signing_cert, registry, signature_value=value)
        cms = await finisher.async_sign_prescribed_attributes('sha256', signed_attrs=attributes)
        await PdfTBSDocument.async_finish_signing(output, prepared, cms, post_sign_instr=tbs.post_sign_instructions)
        with open(out_path, 'wb') as out:
            output.seek(0)
            out.write(output.read())
    async def main():
        for path in sys.argv[3:]:
            name = os.path.basename(path)[:-len('.pdf')] + '-signed.pdf'
            await sign(path, os.path.join(sys.argv[2], name))
    asyncio.run(main())
    """
