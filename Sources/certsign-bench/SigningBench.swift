import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import SignatureJournal
import Signing

/// The Signing module's figures:
/// - detached signature of a big file (default 1 GiB, `--big-mib`): wall time against
///   `openssl dgst -sha256` on the same file, and peak RSS of a fresh child process doing only that;
/// - batch signing of 1 KiB documents with one RSA-2048 / P-256 identity against
///   `openssl speed -elapsed -seconds 1 -multi 1 rsa2048 / ecdsap256` sign rates (single core), measured
///   alternately with ours.
func runSigningBenchmarks(_ harness: BenchHarness) async throws {
    if let child = harness.options.signingChild {
        await SigningBench.runChild(child, harness: harness)
    }
    // `--signing-parts big,batch,cli` picks parts of the suite (default: all).
    let parts = harness.options.signingParts
    if parts.contains("big") { try await SigningBench.bigFile(harness) }
    if parts.contains("batch") { try await SigningBench.batch(harness) }
    if parts.contains("cli") { try await SigningBench.cliBatch(harness) }
}

enum SigningBench {
    // MARK: Big file

    static func bigFile(_ harness: BenchHarness) async throws {
        let mebibytes = harness.options.bigMiB
        let file = harness.scratch.appendingPathComponent("big-\(mebibytes)MiB.bin")
        try makeFile(file, mebibytes: mebibytes)
        defer { try? FileManager.default.removeItem(at: file) }
        let label = mebibytes % 1024 == 0 ? "\(mebibytes / 1024) GiB" : "\(mebibytes) MiB"

        // Ours: each run is a fresh child process that signs the file once and reports the time of
        // the signing call and its own peak RSS (``bigFileChild``). `openssl dgst` runs right after each
        // child, so both see the same load.
        let child = try bigFileChild(harness, file: file)
        var seconds: [Double] = []
        var peaks: [Double] = []
        var dgst: [Double] = []
        var loads: [String] = []
        for index in 0...harness.repetitions {
            let result = try harness.runCommand(child.command, child.arguments)
            guard result.status == 0,
                let line = result.output.split(separator: "\n").first(where: { $0.hasPrefix("SIGNING-CHILD") })
            else {
                throw BenchError("signing child failed: \(result.error)")
            }
            var values: [String: Double] = [:]
            for field in line.split(separator: " ").dropFirst() {
                let parts = field.split(separator: "=")
                if parts.count == 2 { values[String(parts[0])] = Double(parts[1]) }
            }
            guard let time = values["seconds"], let rss = values["peak_rss_kib"], rss > 0 else {
                throw BenchError("unreadable child output: \(line)")
            }
            let dgstStart = DispatchTime.now().uptimeNanoseconds
            guard try harness.runCommand("openssl", ["dgst", "-sha256", file.path]).status == 0 else {
                throw BenchError("openssl dgst failed")
            }
            if index > 0 {
                seconds.append(time)
                peaks.append(rss / 1024)
                dgst.append(Double(DispatchTime.now().uptimeNanoseconds - dgstStart) / 1e9)
                loads.append(SuiteRun.loadAverage())
            }
        }
        let baseline = Sample(values: dgst)
        harness.note(
            "sign \(label): ratio = openssl dgst time / our signing time (≥ 1: we are not slower); "
                + "1-minute load average per round: \(loads.joined(separator: ", "))"
        )
        harness.record(
            "sign \(label) detached (CAdES, SHA-256)",
            ours: Sample(values: seconds),
            baseline: baseline,
            baselineName: "openssl dgst -sha256",
            unit: .seconds,
            goal: 1,
            higherIsBetter: false
        )
        harness.record(
            "peak RSS signing \(label)",
            ours: Sample(values: peaks),
            baseline: Sample(32),
            baselineName: "limit 32 MiB",
            unit: .mebibytes,
            goal: 1,
            higherIsBetter: false
        )
    }

    /// The command of one big-file round: `certsign-bench-bigfile`, which links only the Signing library
    /// as an application would (this binary also links qpdf, libcurl and every provider: as the child
    /// it peaks at 33 MiB of RSS with a 1 KiB file, the lean one at 25 MiB), or this binary when that
    /// one is not built.
    private static func bigFileChild(
        _ harness: BenchHarness,
        file: URL
    ) throws -> (command: String, arguments: [String]) {
        guard let executable = Bundle.main.executablePath else {
            throw BenchError("cannot locate certsign-bench for the child runs")
        }
        let lean = URL(fileURLWithPath: executable).deletingLastPathComponent()
            .appendingPathComponent("certsign-bench-bigfile")
        if FileManager.default.isExecutableFile(atPath: lean.path) {
            let identity = try TestPKI().issueLeaf(subject: "CN=Bench Signer", keyType: .rsa2048)
            guard let key = identity.key as? LocalSigningKey else { throw BenchError("no local key") }
            let keyPath = harness.scratch.appendingPathComponent("bigfile-signer.key").path
            let certificatePath = harness.scratch.appendingPathComponent("bigfile-signer.pem").path
            try key.pemRepresentation(password: nil).write(toFile: keyPath, atomically: true, encoding: .utf8)
            try identity.certificate.pemRepresentation.write(toFile: certificatePath, atomically: true, encoding: .utf8)
            return (lean.path, [file.path, keyPath, certificatePath])
        } else {
            harness.note(
                "certsign-bench-bigfile is not built (make bench builds it): the 1 GiB child is certsign-bench"
            )
            return (executable, ["1", "--suites", "signing", "--signing-child", file.path])
        }
    }

    /// Writes `mebibytes` MiB of pseudo-random blocks.
    static func makeFile(_ url: URL, mebibytes: Int) throws {
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in block.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            block[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
            let handle = FileHandle(forWritingAtPath: url.path)
        else { throw BenchError("cannot create \(url.path)") }
        defer { try? handle.close() }
        for _ in 0..<mebibytes { try handle.write(contentsOf: block) }
    }

    /// The child side: sign the file once, print time and peak RSS, exit.
    static func runChild(_ path: String, harness: BenchHarness) async -> Never {
        do {
            let pki = try TestPKI()
            let identity = try pki.issueLeaf(subject: "CN=Bench Signer", keyType: .rsa2048)
            let start = DispatchTime.now().uptimeNanoseconds
            let signature = try await CMSSigner.sign(fileAt: URL(fileURLWithPath: path), identity: identity)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            // VmHWM, not ru_maxrss: Linux keeps the spawning parent's peak in ru_maxrss across execve.
            let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
            let peak =
                status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }?
                .split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) } ?? -1
            print("SIGNING-CHILD seconds=\(seconds) peak_rss_kib=\(peak) signature_bytes=\(signature.count)")
            try? FileManager.default.removeItem(at: harness.scratch)
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("signing child: \(error)\n".utf8))
            try? FileManager.default.removeItem(at: harness.scratch)
            exit(1)
        }
    }

    // MARK: Batch

    /// Our rates and `openssl speed` are measured alternately, round after round, so that load from
    /// other processes on the machine hits both sides alike.
    static func batch(_ harness: BenchHarness) async throws {
        let pki = try TestPKI()
        let documents = (0..<64).map { index in (0..<1024).map { UInt8(truncatingIfNeeded: $0 &+ index) } }
        // Short, many, interleaved rounds: this figure is compared with a baseline on a machine whose
        // speed varies from second to second, so both medians must sample the same moments.
        let rounds = max(9, harness.repetitions)
        for (keyType, count, tool, name) in [
            (LocalSigningKey.GenerationParameters.rsa2048, 500, "rsa2048", "RSA-2048"),
            (.p256, 2000, "ecdsap256", "P-256"),
        ] {
            let identity = try pki.issueLeaf(subject: "CN=Batch \(name)", keyType: keyType)
            try await batchRows(
                harness,
                identity,
                documents: documents,
                count: count,
                tool: tool,
                name: name,
                rounds: rounds
            )
        }
    }

    /// One key's batch rows: `CMSSigner.sign`, `coordinator.sign(documents:)` and per-document
    /// `coordinator.sign` against `openssl speed`, round after round.
    private static func batchRows(
        _ harness: BenchHarness,
        _ identity: SigningIdentity,
        documents: [[UInt8]],
        count: Int,
        tool: String,
        name: String,
        rounds: Int
    ) async throws {
        let directory = harness.scratch.appendingPathComponent("batch-\(tool)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var registry = ProviderRegistry()
        try registry.register(.pkcs12, description: "bench identity") {
            InMemoryCertificateProvider(id: .pkcs12, identity: identity, storedFromStart: true)
        }
        let coordinator = SigningCoordinator(
            registry: registry,
            journal: try SignatureJournal(url: directory.appendingPathComponent("journal.sqlite"))
        )
        let batch = (0..<count).map { index in
            Document.bytes(documents[index % documents.count], name: "doc \(index)")
        }

        func rate(_ body: () async throws -> Void) async throws -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            try await body()
            return Double(count) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        let direct: () async throws -> Void = {
            for index in 0..<count {
                _ = try await CMSSigner.sign(content: documents[index % documents.count], identity: identity)
            }
        }
        let batched: () async throws -> Void = {
            _ = try await coordinator.sign(documents: batch, provider: .pkcs12)
        }
        let single: () async throws -> Void = {
            for document in batch { _ = try await coordinator.sign(document: document, provider: .pkcs12) }
        }
        try await direct()
        try await batched()
        var baseline: [Double] = []
        var directRates: [Double] = []
        var batchRates: [Double] = []
        var singleRates: [Double] = []
        for _ in 0..<rounds {
            baseline.append(try opensslSignRate(harness, tool))
            directRates.append(try await rate(direct))
            batchRates.append(try await rate(batched))
            singleRates.append(try await rate(single))
        }
        let base = Sample(values: baseline)
        harness.record(
            "CMSSigner.sign 1 KiB \(name) (CAdES)",
            ours: Sample(values: directRates),
            baseline: base,
            baselineName: "openssl speed \(tool) sign/s",
            unit: .perSecond,
            goal: tool == "rsa2048" ? nil : 0.6,
            higherIsBetter: true
        )
        harness.record(
            "batch coordinator.sign(documents:) 1 KiB \(name)",
            ours: Sample(values: batchRates),
            baseline: base,
            baselineName: "openssl speed \(tool) sign/s",
            unit: .perSecond,
            goal: tool == "rsa2048" ? 0.9 : 0.5,
            higherIsBetter: true
        )
        harness.record(
            "per-document coordinator.sign 1 KiB \(name)",
            ours: Sample(values: singleRates),
            baseline: base,
            baselineName: "openssl speed \(tool) sign/s",
            unit: .perSecond,
            higherIsBetter: true
        )
    }

    // MARK: CLI batch

    /// The Python loop the issue compares with: cryptography's PKCS7 builder, write + fsync per file.
    static let pythonLoop = """
        import os, sys
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.serialization import Encoding, pkcs12
        from cryptography.hazmat.primitives.serialization.pkcs7 import PKCS7Options, PKCS7SignatureBuilder
        key, cert, _ = pkcs12.load_key_and_certificates(open(sys.argv[1], "rb").read(), os.environb[b"P12PASS"])
        options = [PKCS7Options.DetachedSignature, PKCS7Options.Binary]
        for path in sys.argv[3:]:
            data = open(path, "rb").read()
            builder = PKCS7SignatureBuilder().set_data(data).add_signer(cert, key, hashes.SHA256())
            signature = builder.sign(Encoding.DER, options)
            target = os.path.join(sys.argv[2], os.path.basename(path) + ".p7s")
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, signature)
            os.fsync(fd)
            os.close(fd)
        """

    /// `certsign sign` (the real release binary) of 2000 files of 1 KiB with one stored identity
    /// and `--out-dir`, fsync durability kept, against the Python loop above (when Python
    /// `cryptography` is installed) and `openssl speed`, measured alternately.
    static func cliBatch(_ harness: BenchHarness) async throws {
        guard let certsign = harness.certsignBesideBench(skipping: "certsign CLI batch rows") else { return }
        let batch = try CLIBatch(harness, certsign: certsign)
        let pki = try TestPKI()
        for (keyType, tool, name) in [
            (LocalSigningKey.GenerationParameters.p256, "ecdsap256", "P-256"), (.rsa2048, "rsa2048", "RSA-2048"),
        ] {
            let p12 = try batch.importIdentity(
                try pki.issueLeaf(subject: "CN=CLI Batch \(name)", keyType: keyType),
                tool
            )
            try batch.measure(tool: tool, name: name, p12: p12, withFileAndPython: keyType == .p256)
        }
    }

    /// The single-core sign rate `openssl speed -elapsed -seconds 1 -multi 1 <tool>` prints (the
    /// column before last of its result line). `-elapsed` divides by wall-clock time, as our rows
    /// do; without it openssl divides by its user CPU time, which a loaded machine does not
    /// stretch, so every ratio against it fell with the load.
    static func opensslSignRate(_ harness: BenchHarness, _ tool: String) throws -> Double {
        // `openssl speed` stops its loops with SIGALRM, and processes started by Foundation's
        // Process inherit the calling thread's signal mask, in which Swift's runtime blocks
        // SIGALRM: the run would never end. perl clears the mask, then execs openssl.
        let result = try harness.runCommand(
            "perl",
            [
                "-MPOSIX", "-e", "sigprocmask(SIG_SETMASK, POSIX::SigSet->new) or die; exec @ARGV or die",
                "openssl", "speed", "-elapsed", "-seconds", "1", "-multi", "1", tool,
            ]
        )
        guard result.status == 0 else { throw BenchError("openssl speed \(tool) failed: \(result.error)") }
        let marker = tool.hasPrefix("rsa") ? "rsa 2048 bits" : "ecdsa (nistp256)"
        guard let line = result.output.split(separator: "\n").last(where: { $0.contains(marker) }) else {
            throw BenchError("no '\(marker)' line in openssl speed output")
        }
        let numbers = line.split(separator: " ").compactMap { Double($0) }
        guard numbers.count >= 2 else { throw BenchError("unreadable openssl speed line: \(line)") }
        return numbers[numbers.count - 2]
    }
}
