import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation

/// The `longterm` suite: 1000 detached CAdES B-T signatures of one signer (`certsign sign
/// --tsa`, the documents beside them), extended in one `certsign extend` run to B-LT and, from
/// another copy, to B-LTA, against the emulator as TSA, OCSP responder and CRL (in this process,
/// so its request log counts the OCSP requests). Each row's baseline is the B-T signing of the same
/// documents in the same round; a note gives the OCSP requests of each run, which must be one per
/// distinct certificate (the signer's and the TSA's).
func runLongTermBenchmarks(_ harness: BenchHarness) async throws {
    guard let setup = try LongTermBenchSetup(harness, skipping: "long-term rows") else { return }
    defer { setup.emulator.stop() }
    let (emulator, batch, certsign, directory, tsa) = (
        setup.emulator, setup.batch, setup.certsign, setup.directory, setup.timestampArguments
    )
    let ca = setup.certificateAuthority
    let count = min(1000, harness.options.cliDocuments)  // --cli-documents N: fewer, for a quick run
    var signing: [Double] = []
    var rates: [String: [Double]] = [:]
    var requests: [String: [Int]] = [:]
    for round in 0..<max(3, min(harness.repetitions, 5)) {
        var copies: [String: [String]] = [:]
        for level in ["b-lt", "b-lta"] {
            copies[level] = try harness.writeDocuments(
                count,
                in: directory.appendingPathComponent("\(level)-\(round)")
            )
        }
        // B-T: both copies signed, the first one timed (its documents are the same bytes).
        for (index, level) in ["b-lt", "b-lta"].enumerated() {
            let start = DispatchTime.now().uptimeNanoseconds
            try run(
                harness,
                certsign,
                ["sign"] + copies[level, default: []] + ["--identity", "longterm"]
                    + ["--password-env", "P12PASS"] + tsa,
                batch.environment
            )
            if index == 0 { signing.append(rate(count, since: start)) }
        }
        for level in ["b-lt", "b-lta"] {
            let signatures = copies[level, default: []].map { $0 + ".p7s" }
            let before = ocspRequests(emulator)
            let start = DispatchTime.now().uptimeNanoseconds
            try run(
                harness,
                certsign,
                ["extend"] + signatures + ["--level", level, "--ca", ca] + tsa,
                batch.environment
            )
            rates[level, default: []].append(rate(count, since: start))
            requests[level, default: []].append(ocspRequests(emulator) - before)
        }
    }
    for (level, name) in [("b-lt", "B-LT"), ("b-lta", "B-LTA")] {
        harness.record(
            "certsign extend \(count) CAdES B-T .p7s of one signer to \(name) (one run)",
            ours: Sample(values: rates[level, default: []]),
            baseline: Sample(values: signing),
            baselineName: "certsign sign --tsa (B-T) docs/s",
            unit: .perSecond,
            goal: nil,
            higherIsBetter: true
        )
        harness.note(
            "extend to \(name): OCSP requests per run \(requests[level, default: []]) for 2 distinct certificates "
                + "(the signer's and the TSA's; the root is the anchor)"
        )
    }
}

/// Runs certsign and throws with its error output when it fails.
private func run(
    _ harness: BenchHarness,
    _ certsign: String,
    _ arguments: [String],
    _ environment: [String: String]
) throws {
    let result = try harness.runCommand(certsign, arguments, environment: environment)
    guard result.status == 0 else { throw BenchError("certsign \(arguments[0]) failed: \(result.error.prefix(400))") }
}

/// Documents per second since `start` (DispatchTime nanoseconds).
private func rate(_ count: Int, since start: UInt64) -> Double {
    Double(count) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}

/// The OCSP requests the emulator has answered so far.
private func ocspRequests(_ emulator: DSSEmulator) -> Int {
    emulator.receivedRequests.filter { $0.path.hasSuffix("/ocsp") }.count
}

/// The emulator (TSA, OCSP responder and CRL, in this process) and a signer whose certificate
/// names them, imported into a store as `longterm`: what the long-term rows sign and extend with.
struct LongTermBenchSetup {
    let emulator: DSSEmulator
    let batch: CLIBatch
    let certsign: String
    /// Where the rows write their documents.
    let directory: URL
    /// The emulator's CA certificate (PEM), the trust anchor of every path.
    let certificateAuthority: String
    /// `--tsa URL --tsa-ca FILE`.
    let timestampArguments: [String]

    /// Starts the emulator and imports the signer; nil (with a note naming `rows`) when the
    /// release `certsign` is not built. The caller stops the emulator.
    init?(_ harness: BenchHarness, skipping rows: String) throws {
        guard let certsign = harness.certsignBesideBench(skipping: rows) else { return nil }
        let emulator = try DSSEmulator(
            configuration: .init(connectionLimit: 128, requestLogLimit: 100_000, issuesRevocationURLs: true)
        )
        let base = try emulator.start()
        guard let key = emulator.seed.certificateAuthorityKey, let ocsp = emulator.ocspURL, let crl = emulator.crlURL
        else {
            emulator.stop()
            throw BenchError("the emulator has no CA key or revocation URLs")
        }
        let batch = try CLIBatch(harness, certsign: certsign)
        let pki = TestPKI(root: TestPKI.Authority(certificate: emulator.seed.certificateAuthority, key: key))
        let signer = try pki.issueLeaf(
            subject: "CN=Long-term Bench,O=Тест",
            keyType: .p256,
            extensions: [
                ("keyUsage", "critical,digitalSignature,nonRepudiation"),
                ("authorityInfoAccess", "OCSP;URI:\(ocsp.absoluteString)"),
                ("crlDistributionPoints", "URI:\(crl.absoluteString)"),
            ]
        )
        _ = try batch.importIdentity(signer, "longterm")
        directory = harness.scratch.appendingPathComponent("longterm")
        certificateAuthority = directory.appendingPathComponent("emulator-ca.pem").path
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(emulator.certificateAuthorityPEM.utf8).write(to: URL(fileURLWithPath: certificateAuthority))
        timestampArguments = [
            "--tsa", base.appendingPathComponent("tsa").absoluteString, "--tsa-ca", certificateAuthority,
        ]
        self.emulator = emulator
        self.batch = batch
        self.certsign = certsign
    }

    /// `certsign sign` of `documents` as B-T (one `.p7s` beside each), then `certsign extend` to
    /// `level`; throws with certsign's error output when either fails.
    func signAndExtend(_ harness: BenchHarness, _ documents: [String], level: String) throws {
        let sign = ["sign"] + documents + ["--identity", "longterm", "--password-env", "P12PASS"] + timestampArguments
        let extend =
            ["extend"] + documents.map { $0 + ".p7s" } + ["--level", level, "--ca", certificateAuthority]
            + timestampArguments
        for arguments in [sign, extend] {
            let result = try harness.runCommand(certsign, arguments, environment: batch.environment)
            guard result.status == 0 else {
                throw BenchError("certsign \(arguments[0]) failed: \(result.error.prefix(400))")
            }
        }
    }
}
