import EmulatorKit
import Foundation
import TestSupport

/// The `verify-longterm` suite: 2000 detached CAdES B-LT signatures (`certsign sign --tsa`, then
/// `certsign extend --level b-lt`, against the emulator of ``LongTermBenchSetup``) verified in one
/// `certsign verify` run offline (the emulator stopped: only the validation data inside each
/// signature), against pyHanko's EN 319 102-1 validation with time (`ades_with_time_validation`)
/// in a loop in one Python process over the same files, given the same embedded data and no
/// fetching. Goal ≥ 5×. `--cli-documents N` takes fewer. Then 200 PAdES B-LTA PDFs (`certsign
/// sign --level b-lta`: a signature timestamp, a `/DSS` revision and a document timestamp) in one
/// `certsign verify` against pyHanko's `ades_lta_validation` loop: goal ≥ 3×; `--verify-pdfs N`
/// takes fewer.
func runVerifyLongTermBenchmarks(_ harness: BenchHarness) async throws {
    guard try harness.runCommand("python3", ["-c", "import pyhanko"]).status == 0 else {
        harness.note("verify-longterm rows skipped: pyHanko is not installed (make deps installs it)")
        return
    }
    guard let setup = try LongTermBenchSetup(harness, skipping: "verify-longterm rows") else { return }
    let count = min(2000, harness.options.cliDocuments)
    let documents = try harness.writeDocuments(count, in: setup.directory.appendingPathComponent("verify-b-lt"))
    let pdfs: [String]
    do {
        try setup.signAndExtend(harness, documents, level: "b-lt")
        pdfs = try VerifyLongTermBench.signedPDFs(harness, setup, count: min(200, harness.options.verifyPDFs))
    } catch {
        setup.emulator.stop()
        throw error
    }
    // Offline from here: nothing answers at the URLs the certificates name.
    setup.emulator.stop()
    let signatures = documents.map { $0 + ".p7s" }
    try VerifyLongTermBench.measure(
        harness,
        setup,
        "certsign verify \(count) CAdES B-LT .p7s offline (one call)",
        files: signatures,
        python: VerifyLongTermBench.pythonLoop,
        baselineName: "pyHanko ades_with_time_validation loop docs/s",
        goal: 5
    )
    try VerifyLongTermBench.measure(
        harness,
        setup,
        "certsign verify \(pdfs.count) PAdES B-LTA PDFs offline (one call)",
        files: pdfs,
        python: VerifyLongTermBench.pythonLTALoop,
        baselineName: "pyHanko ades_lta_validation loop docs/s",
        goal: 3
    )
}

enum VerifyLongTermBench {
    /// `count` small PDFs signed PAdES B-LTA by `certsign sign` in one run; their paths.
    static func signedPDFs(_ harness: BenchHarness, _ setup: LongTermBenchSetup, count: Int) throws -> [String] {
        let folder = setup.directory.appendingPathComponent("verify-b-lta")
        let signed = setup.directory.appendingPathComponent("verify-b-lta-signed")
        for directory in [folder, signed] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let inputs = try (0..<count).map { index in
            let path = folder.appendingPathComponent(String(format: "doc-%04d.pdf", index)).path
            try Data(TestPDF.minimal(pages: 1 + index % 3)).write(to: URL(fileURLWithPath: path))
            return path
        }
        let arguments =
            ["sign"] + inputs
            + ["--format", "pades", "--level", "b-lta", "--ca", setup.certificateAuthority, "--out-dir", signed.path]
            + ["--identity", "longterm", "--password-env", "P12PASS"] + setup.timestampArguments
        let result = try harness.runCommand(setup.certsign, arguments, environment: setup.batch.environment)
        guard result.status == 0 else { throw BenchError("certsign sign --level b-lta: \(result.error.prefix(400))") }
        let made = try FileManager.default.contentsOfDirectory(atPath: signed.path).sorted()
        guard made.count == count else { throw BenchError("certsign made \(made.count) of \(count) B-LTA PDFs") }
        return made.map { signed.appendingPathComponent($0).path }
    }

    /// Alternates `certsign verify FILES --ca CA` (which must exit 0) and the Python loop over the
    /// same files, and records the row with pyHanko's indications and the load in notes.
    static func measure(
        _ harness: BenchHarness,
        _ setup: LongTermBenchSetup,
        _ name: String,
        files: [String],
        python script: String,
        baselineName: String,
        goal: Double
    ) throws {
        var ours: [Double] = []
        var python: [Double] = []
        var loads: [String] = []
        var verdicts = ""
        func rate(since start: UInt64) -> Double {
            Double(files.count) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        for _ in 0..<max(1, min(harness.repetitions, 5)) {
            loads.append(SuiteRun.loadAverage())
            var start = DispatchTime.now().uptimeNanoseconds
            let verify = try harness.runCommand(
                setup.certsign,
                ["verify"] + files + ["--ca", setup.certificateAuthority],
                environment: setup.batch.environment
            )
            guard verify.status == 0 else {
                throw BenchError("certsign verify failed: \(verify.error.prefix(400))\(verify.output.suffix(400))")
            }
            ours.append(rate(since: start))
            start = DispatchTime.now().uptimeNanoseconds
            let loop = try harness.runCommand("python3", ["-c", script, setup.certificateAuthority] + files)
            guard loop.status == 0 else { throw BenchError("the pyHanko loop failed: \(loop.error.suffix(800))") }
            python.append(rate(since: start))
            verdicts = loop.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        harness.record(
            name,
            ours: Sample(values: ours),
            baseline: Sample(values: python),
            baselineName: baselineName,
            unit: .perSecond,
            goal: goal,
            higherIsBetter: true
        )
        harness.note("\(name): pyHanko's indications (count each): \(verdicts)")
        harness.note("\(name): 1-minute load average before each round: \(loads.joined(separator: ", "))")
    }

    /// pyHanko's long-term validation (EN 319 102-1 §5.6.3) of every signature of each PDF: the
    /// root trusted, revocation required, only the document's own `/DSS` and signatures (no
    /// fetching). Prints each sub-indication with its count.
    static let pythonLTALoop = """
        import asyncio, collections, sys
        from pyhanko.keys import load_cert_from_pemder
        from pyhanko.pdf_utils.reader import PdfFileReader
        from pyhanko.sign.validation import ades
        from pyhanko.sign.validation.dss import DocumentSecurityStore
        from pyhanko.sign.validation.policy_decl import (
            SignatureValidationSpec, PdfSignatureValidationSpec, RevocationInfoGatheringSpec,
            RevinfoOnlineFetchingRule, LocalKnowledge)
        from pyhanko_certvalidator.context import CertValidationPolicySpec
        from pyhanko_certvalidator.policy_decl import (
            CertRevTrustPolicy, RevocationCheckingPolicy, RevocationCheckingRule)
        from pyhanko_certvalidator.registry import SimpleTrustManager
        root = load_cert_from_pemder(sys.argv[1])
        required = RevocationCheckingPolicy(
            ee_certificate_rule=RevocationCheckingRule.CRL_OR_OCSP_REQUIRED,
            intermediate_ca_cert_rule=RevocationCheckingRule.CRL_OR_OCSP_REQUIRED)
        async def main():
            counts = collections.Counter()
            for path in sys.argv[2:]:
                with open(path, 'rb') as f:
                    reader = PdfFileReader(f)
                    dss = DocumentSecurityStore.read_dss(reader)
                    spec = SignatureValidationSpec(
                        cert_validation_policy=CertValidationPolicySpec(
                            trust_manager=SimpleTrustManager.build(trust_roots=[root]),
                            revinfo_policy=CertRevTrustPolicy(required)),
                        revinfo_gathering_policy=RevocationInfoGatheringSpec(
                            online_fetching_rule=RevinfoOnlineFetchingRule.LOCAL_ONLY),
                        local_knowledge=LocalKnowledge(known_certs=list(dss.load_certs())))
                    for sig in reader.embedded_regular_signatures:
                        result = await ades.ades_lta_validation(sig, PdfSignatureValidationSpec(spec))
                        counts[str(result.ades_subindic)] += 1
            print(', '.join(f'{name} {n}' for name, n in sorted(counts.items())))
        asyncio.run(main())
        """

    /// pyHanko's validation with time of each `.p7s` (its document beside it, without `.p7s`):
    /// the root trusted, revocation required for every certificate, answered only from the
    /// certificates, CRLs and OCSP responses the SignedData carries (no fetching). Prints each
    /// indication/sub-indication with its count.
    static let pythonLoop = """
        import asyncio, collections, hashlib, sys
        from asn1crypto import cms, ocsp
        from pyhanko.keys import load_cert_from_pemder
        from pyhanko.sign.validation import ades
        from pyhanko.sign.validation.policy_decl import (
            SignatureValidationSpec, RevocationInfoGatheringSpec, RevinfoOnlineFetchingRule, LocalKnowledge)
        from pyhanko_certvalidator.context import CertValidationPolicySpec
        from pyhanko_certvalidator.policy_decl import (
            CertRevTrustPolicy, RevocationCheckingPolicy, RevocationCheckingRule)
        from pyhanko_certvalidator.registry import SimpleTrustManager
        from pyhanko_certvalidator.revinfo.archival import CRLContainer, OCSPContainer
        root = load_cert_from_pemder(sys.argv[1])
        required = RevocationCheckingPolicy(
            ee_certificate_rule=RevocationCheckingRule.CRL_OR_OCSP_REQUIRED,
            intermediate_ca_cert_rule=RevocationCheckingRule.CRL_OR_OCSP_REQUIRED)
        policy = CertValidationPolicySpec(
            trust_manager=SimpleTrustManager.build(trust_roots=[root]), revinfo_policy=CertRevTrustPolicy(required))
        def knowledge(signed_data):
            certs = [c.chosen for c in signed_data['certificates']]
            crls, ocsps = [], []
            for choice in signed_data['crls'] or []:
                if choice.name == 'crl':
                    crls.append(CRLContainer(choice.chosen))
                elif choice.chosen['other_rev_info_format'].native == 'ocsp_response':
                    ocsps += OCSPContainer.load_multi(ocsp.OCSPResponse.load(choice.chosen['other_rev_info'].dump()))
            return LocalKnowledge(known_certs=certs, known_ocsps=ocsps, known_crls=crls)
        async def main():
            counts = collections.Counter()
            for path in sys.argv[2:]:
                with open(path, 'rb') as f:
                    signed_data = cms.ContentInfo.load(f.read())['content']
                with open(path[:-len('.p7s')], 'rb') as f:
                    digest = hashlib.sha256(f.read()).digest()
                spec = SignatureValidationSpec(
                    cert_validation_policy=policy,
                    revinfo_gathering_policy=RevocationInfoGatheringSpec(
                        online_fetching_rule=RevinfoOnlineFetchingRule.LOCAL_ONLY),
                    local_knowledge=knowledge(signed_data))
                result = await ades.ades_with_time_validation(signed_data, spec, raw_digest=digest)
                counts[str(result.ades_subindic)] += 1
            print(', '.join(f'{name} {n}' for name, n in sorted(counts.items())))
        asyncio.run(main())
        """
}
