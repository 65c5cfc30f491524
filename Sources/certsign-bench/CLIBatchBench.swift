import CertificateProviders
import Foundation

/// The CLI batch rows (``SigningBench/cliBatch(_:)``): N documents of 1 KiB, a store with the identities
/// imported by the real `certsign`, and the rates of `certsign sign`, the Python loop and `openssl speed`,
/// measured in alternating rounds.
struct CLIBatch {
    let harness: BenchHarness
    let certsign: String
    let directory: URL
    let paths: [String]
    let environment: [String: String]
    let python: Bool

    /// Writes the documents (`--cli-documents`, default 2000).
    init(_ harness: BenchHarness, certsign: String) throws {
        self.harness = harness
        self.certsign = certsign
        directory = harness.scratch.appendingPathComponent("cli-batch")
        paths = try harness.writeDocuments(
            harness.options.cliDocuments,
            in: directory.appendingPathComponent("documents")
        )
        python = try harness.runCommand("python3", ["-c", "import cryptography"]).status == 0
        if !python { harness.note("Python cryptography is not installed: the Python loop row is skipped") }
        environment = ["CERTSIGN_HOME": directory.appendingPathComponent("home").path, "P12PASS": "bench-password-1"]
    }

    /// Exports `identity` to a .p12 with openssl and imports it into the store under `alias`; the .p12's path.
    func importIdentity(_ identity: SigningIdentity, _ alias: String) throws -> String {
        let key = directory.appendingPathComponent("\(alias).key").path
        let certificate = directory.appendingPathComponent("\(alias).pem").path
        let p12 = directory.appendingPathComponent("\(alias).p12").path
        guard let local = identity.key as? LocalSigningKey else { throw BenchError("no local key") }
        try local.pemRepresentation(password: nil).write(toFile: key, atomically: true, encoding: .utf8)
        try identity.certificate.pemRepresentation.write(toFile: certificate, atomically: true, encoding: .utf8)
        let export = [
            "pkcs12", "-export", "-inkey", key, "-in", certificate, "-name", alias, "-out", p12, "-passout",
            "env:P12PASS",
        ]
        for (command, arguments) in [
            ("openssl", export),
            (certsign, ["identity", "import", p12, "--alias", alias, "--password-env", "P12PASS"]),
        ] {
            let result = try harness.runCommand(command, arguments, environment: environment)
            guard result.status == 0 else { throw BenchError("\(command) \(arguments[0]) failed: \(result.error)") }
        }
        return p12
    }

    /// Documents per second of one command that writes one signature per document into `output`.
    func rate(_ command: String, _ arguments: [String], output: URL) throws -> Double {
        try harness.documentsPerSecond(command, arguments, environment: environment, output: output, count: paths.count)
    }

    /// The rounds for one key (`tool` is its store alias and `openssl speed`'s name) and their rows;
    /// `withFileAndPython` adds `--p12 FILE` and the Python loop.
    func measure(tool: String, name: String, p12: String, withFileAndPython: Bool) throws {
        var ours: [Double] = []
        var fromFile: [Double] = []
        var loop: [Double] = []
        var speed: [Double] = []
        var loads: [String] = []
        for round in 0..<max(3, min(harness.repetitions, 5)) {
            loads.append(SuiteRun.loadAverage())
            let output = directory.appendingPathComponent("out-\(tool)-\(round)")
            let stored = ["--identity", tool, "--password-env", "P12PASS", "--out-dir", output.path]
            ours.append(try rate(certsign, ["sign"] + paths + stored, output: output))
            if withFileAndPython {
                // The same .p12 file the Python loop opens (2048 PBKDF2 iterations, not the store's
                // 600 000): the signing itself, without the store's unlock.
                let fileOutput = directory.appendingPathComponent("out-file-\(tool)-\(round)")
                let file = ["--p12", p12, "--password-env", "P12PASS", "--out-dir", fileOutput.path]
                fromFile.append(try rate(certsign, ["sign"] + paths + file, output: fileOutput))
                if python {
                    let pythonOutput = directory.appendingPathComponent("python-\(round)")
                    let arguments = ["-c", SigningBench.pythonLoop, p12, pythonOutput.path] + paths
                    loop.append(try rate("python3", arguments, output: pythonOutput))
                }
            }
            speed.append(try SigningBench.opensslSignRate(harness, tool))
        }
        let label = "certsign sign \(paths.count) × 1 KiB \(name) --out-dir (CLI, fsync)"
        let python = "Python cryptography loop docs/s"
        if !loop.isEmpty {
            record(label, ours, against: loop, python, goal: 2)
            if !fromFile.isEmpty {
                let fileLabel = "certsign sign \(paths.count) × 1 KiB \(name) --p12 FILE --out-dir (CLI, fsync)"
                record(fileLabel, fromFile, against: loop, python, goal: 2)
            }
        }
        record(label, ours, against: speed, "openssl speed \(tool) sign/s", goal: tool == "rsa2048" ? 0.7 : nil)
        harness.note("\(label): 1-minute load average before each round: \(loads.joined(separator: ", "))")
    }

    private func record(_ label: String, _ ours: [Double], against baseline: [Double], _ name: String, goal: Double?) {
        harness.record(
            label,
            ours: Sample(values: ours),
            baseline: Sample(values: baseline),
            baselineName: name,
            unit: .perSecond,
            goal: goal,
            higherIsBetter: true
        )
    }
}

extension BenchHarness {
    /// Writes `count` documents of 1 KiB (`doc-00000.txt`, …, each different) into `directory`; their paths.
    func writeDocuments(_ count: Int, in directory: URL) throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try (0..<count).map { index in
            let path = directory.appendingPathComponent(String(format: "doc-%05d.txt", index)).path
            let bytes = (0..<1024).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
                throw BenchError("cannot write \(path)")
            }
            return path
        }
    }

    /// Documents per second of one command that writes one file per document (`count` of them) into
    /// `output` (emptied first).
    /// - Throws: when the command fails or writes another number of files.
    func documentsPerSecond(
        _ command: String,
        _ arguments: [String],
        environment: [String: String],
        output: URL,
        count: Int
    ) throws -> Double {
        try? FileManager.default.removeItem(at: output)
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try runCommand(command, arguments, environment: environment)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard result.status == 0 else { throw BenchError("\(command) failed: \(result.error.prefix(400))") }
        let made = try FileManager.default.contentsOfDirectory(atPath: output.path).count
        guard made == count else { throw BenchError("\(command) made \(made) of \(count) files") }
        return Double(count) / seconds
    }
}
