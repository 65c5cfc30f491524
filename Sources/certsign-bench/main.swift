// certsign-bench: `make bench`. Release build; every figure is printed beside a baseline measured in
// the same run on the same machine, with the ratio and the goal the issues set.
// `certsign-bench [RUNS] [--write FILE] [flags]` (BenchOptions): RUNS rounds a figure (default 5);
// `--write BENCHMARKS.md` (what `make bench` passes) also puts each suite's table into that file
// (BenchmarksFile).
import Foundation

let options: BenchOptions
if CommandLine.arguments.contains("--help") {
    print(BenchOptions.usage)
    exit(0)
}
do {
    options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("certsign-bench: \(error)\n\(BenchOptions.usage)\n".utf8))
    exit(64)
}
// The run lives in a function, not in top-level code: LeakSanitizer reports the temporaries of
// async top-level code as leaked at exit (`make test-asan` runs the bench through BenchmarksFileTests).
func runBench(_ options: BenchOptions) async throws {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("certsign-bench-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }

    let harness = BenchHarness(options: options, scratch: scratch)
    if let profile = options.profile {
        // A fixed loop for profilers (valgrind --tool=callgrind, perf): no table, no baselines.
        try await runProfileLoop(profile, options: options)
        exit(0)
    }
    let host = ProcessInfo.processInfo
    print(
        "certsign-bench: \(host.processorCount) cores, \(host.physicalMemory / 1_048_576) MiB, \(options.runs) runs per "
            + "figure, \(Date())"
    )

    // bench suites: each module adds one line here; `--suites a,b` picks some (default: all).
    let suites = options.suites
    if suites.contains("signing") || options.signingChild != nil {
        // First: its child processes exit inside it.
        try await harness.run(suite: "signing") { try await runSigningBenchmarks(harness) }
    }
    // Before the others: its child processes exit inside it.
    if suites.contains("pdf") { try await harness.run(suite: "pdf") { try await runPDFBenchmarks(harness) } }
    if suites.contains("pdf-revisions") {
        try await harness.run(suite: "pdf-revisions") { try await runPDFRevisionsBenchmark(harness) }
    }
    if suites.contains("trusted-lists") {
        try await harness.run(suite: "trusted-lists") { try await runTrustedListsBenchmark(harness) }
    }
    if suites.contains("pkcs12") {
        try await harness.runNotingFailure(suite: "pkcs12") { try await runPKCS12Benchmarks(harness) }
    }
    if suites.contains("pkcs12-store") {
        try await harness.run(suite: "pkcs12-store") { try await runPKCS12StoreUnlockBenchmark(harness) }
    }
    if suites.contains("fmp") {
        try await harness.run(suite: "fmp") { try await runRemoteBenchmarks(harness, FMPBenchSession.self) }
    }
    if suites.contains("cryptopro") {
        try await harness.run(suite: "cryptopro") { try await runRemoteBenchmarks(harness, CryptoProBenchSession.self) }
    }
    if suites.contains("csc") {
        try await harness.run(suite: "csc") { try await runRemoteBenchmarks(harness, CSCBenchSession.self) }
    }
    if suites.contains("pkcs11") {
        try await harness.runNotingFailure(suite: "pkcs11") { try await runPKCS11Benchmarks(harness) }
    }
    if suites.contains("gost") { try await harness.run(suite: "gost") { try await runGOSTBenchmarks(harness) } }
    if suites.contains("verify") { try await harness.run(suite: "verify") { try await runVerifyBenchmarks(harness) } }
    if suites.contains("vault") {
        try await harness.runNotingFailure(suite: "vault") { try await runVaultBenchmarks(harness) }
    }
    if suites.contains("journal") {
        try await harness.run(suite: "journal") { try await runJournalBenchmarks(harness) }
    }
    if suites.contains("longterm") {
        try await harness.run(suite: "longterm") { try await runLongTermBenchmarks(harness) }
    }
    if suites.contains("verify-longterm") {
        try await harness.run(suite: "verify-longterm") { try await runVerifyLongTermBenchmarks(harness) }
    }
    if suites.contains("pdf-appearance") {
        try await harness.run(suite: "pdf-appearance") { try await runPDFAppearanceBenchmarks(harness) }
    }
    if suites.contains("two-phase") {
        try await harness.run(suite: "two-phase") { try await runTwoPhaseBenchmarks(harness) }
    }

    harness.printTable()
    if let benchmarksFile = options.write {
        // The command as it was run (its flags say what it measured; none is a secret).
        try BenchmarksFile.write(harness, command: options.commandLine, to: benchmarksFile)
        print("certsign-bench: wrote \(benchmarksFile.path)")
    }
}

try await runBench(options)
