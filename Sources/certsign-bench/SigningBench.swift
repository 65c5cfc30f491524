import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing

/// The Signing module's figures:
/// - detached signature of a big file (default 1 GiB, `CERTSIGN_BENCH_BIG_MIB`): wall time against
///   `openssl dgst -sha256` on the same file, and peak RSS of a fresh child process doing only that;
/// - batch signing of 1 KiB documents with one RSA-2048 / P-256 identity against
///   `openssl speed -seconds 1 -multi 1 rsa2048 / ecdsap256` sign rates (single core), measured
///   alternately with ours.
func runSigningBenchmarks(_ harness: BenchHarness) async throws {
    let environment = ProcessInfo.processInfo.environment
    if let child = environment[SigningBench.childVariable] {
        await SigningBench.runChild(child, harness: harness)
    }
    try await SigningBench.bigFile(harness)
    try await SigningBench.batch(harness)
}

enum SigningBench {
    static let childVariable = "CERTSIGN_BENCH_SIGNING_CHILD"

    // MARK: Big file

    static func bigFile(_ harness: BenchHarness) async throws {
        let mebibytes = Int(ProcessInfo.processInfo.environment["CERTSIGN_BENCH_BIG_MIB"] ?? "") ?? 1024
        let file = harness.scratch.appendingPathComponent("big-\(mebibytes)MiB.bin")
        try makeFile(file, mebibytes: mebibytes)
        defer { try? FileManager.default.removeItem(at: file) }
        let label = mebibytes % 1024 == 0 ? "\(mebibytes / 1024) GiB" : "\(mebibytes) MiB"

        // Ours: each run is a fresh child process that signs the file once and reports the time of
        // the signing call and its own peak RSS.
        guard let executable = Bundle.main.executablePath else {
            throw BenchError("cannot locate certsign-bench for the child runs")
        }
        var seconds: [Double] = []
        var peaks: [Double] = []
        for index in 0...harness.repetitions {
            let result = try harness.runCommand(executable, ["1"], environment: [childVariable: file.path])
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
            "sign \(label) detached (CAdES, SHA-256)",
            ours: Sample(values: seconds),
            baseline: baseline,
            baselineName: "openssl dgst -sha256",
            unit: .seconds,
            goal: 1 / 1.3,
            higherIsBetter: false
        )
        harness.record(
            "peak RSS signing \(label)",
            ours: Sample(values: peaks),
            baseline: Sample(64),
            baselineName: "limit 64 MiB",
            unit: .mebibytes,
            goal: 1,
            higherIsBetter: false
        )
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
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            print("SIGNING-CHILD seconds=\(seconds) maxrss_kib=\(usage.ru_maxrss) signature_bytes=\(signature.count)")
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
                higherIsBetter: true
            )
            harness.record(
                "batch coordinator.sign(documents:) 1 KiB \(name)",
                ours: Sample(values: batchRates),
                baseline: base,
                baselineName: "openssl speed \(tool) sign/s",
                unit: .perSecond,
                goal: keyType == .rsa2048 ? 0.8 : nil,
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
    }

    /// The single-core sign rate `openssl speed -seconds 1 -multi 1 <tool>` prints (the column
    /// before last of its result line).
    static func opensslSignRate(_ harness: BenchHarness, _ tool: String) throws -> Double {
        // `openssl speed` stops its loops with SIGALRM, and processes started by Foundation's
        // Process inherit the calling thread's signal mask, in which Swift's runtime blocks
        // SIGALRM: the run would never end. perl clears the mask, then execs openssl.
        let result = try harness.runCommand(
            "perl",
            [
                "-MPOSIX", "-e", "sigprocmask(SIG_SETMASK, POSIX::SigSet->new) or die; exec @ARGV or die",
                "openssl", "speed", "-seconds", "1", "-multi", "1", tool,
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
