// certsign-bench: `make bench`. Release build; every figure is printed beside a baseline measured in
// the same run on the same machine, with the ratio and the goal the issues set.
// `certsign-bench [RUNS] [--write FILE]`: RUNS rounds a figure (default 5); `--write BENCHMARKS.md` (what
// `make bench` passes) also puts each suite's table into that file (BenchmarksFile).
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
var benchmarksFile: URL?
if let flag = arguments.firstIndex(of: "--write") {
    guard flag + 1 < arguments.count else {
        FileHandle.standardError.write(Data("usage: certsign-bench [RUNS] [--write FILE]\n".utf8))
        exit(64)
    }
    benchmarksFile = URL(fileURLWithPath: arguments[flag + 1])
    arguments.removeSubrange(flag...(flag + 1))
}
let repetitions = arguments.first.flatMap(Int.init) ?? 5
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("certsign-bench-\(getpid())")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: scratch) }

let harness = BenchHarness(repetitions: repetitions, scratch: scratch)
if let profile = ProcessInfo.processInfo.environment["CERTSIGN_BENCH_PROFILE"] {
    // A fixed loop for profilers (valgrind --tool=callgrind, perf): no table, no baselines.
    try await runProfileLoop(profile)
    exit(0)
}
let host = ProcessInfo.processInfo
print(
    "certsign-bench: \(host.processorCount) cores, \(host.physicalMemory / 1_048_576) MiB, \(repetitions) runs per "
        + "figure, \(Date())"
)

// bench suites: each module adds one line here
// CERTSIGN_BENCH_SUITES=signing,pkcs12,pkcs12-store,fmp,cryptopro,pkcs11,pdf,gost,verify picks suites (default: all).
let suites = Set(
    (ProcessInfo.processInfo.environment["CERTSIGN_BENCH_SUITES"]
        ?? "signing,pkcs12,pkcs12-store,fmp,cryptopro,pkcs11,pdf,gost,verify").split(separator: ",").map(String.init)
)
if suites.contains("signing") || ProcessInfo.processInfo.environment[SigningBench.childVariable] != nil {
    // First: its child processes exit inside it.
    try await harness.run(suite: "signing") { try await runSigningBenchmarks(harness) }
}
// Before the others: its child processes exit inside it.
if suites.contains("pdf") { try await harness.run(suite: "pdf") { try await runPDFBenchmarks(harness) } }
if suites.contains("pkcs12") { try await harness.run(suite: "pkcs12") { try await runPKCS12Benchmarks(harness) } }
if suites.contains("pkcs12-store") {
    try await harness.run(suite: "pkcs12-store") { try await runPKCS12StoreUnlockBenchmark(harness) }
}
if suites.contains("fmp") { try await harness.run(suite: "fmp") { try await runFMPBenchmarks(harness) } }
if suites.contains("cryptopro") {
    try await harness.run(suite: "cryptopro") { try await runCryptoProBenchmarks(harness) }
}
if suites.contains("pkcs11") { try await harness.run(suite: "pkcs11") { try await runPKCS11Benchmarks(harness) } }
if suites.contains("gost") { try await harness.run(suite: "gost") { try await runGOSTBenchmarks(harness) } }
if suites.contains("verify") { try await harness.run(suite: "verify") { try await runVerifyBenchmarks(harness) } }

harness.printTable()
if let benchmarksFile {
    // The command as it was run, with the CERTSIGN_BENCH_* variables that changed it (none is a secret).
    let variables = ProcessInfo.processInfo.environment.filter { $0.key.hasPrefix("CERTSIGN_BENCH_") }
        .sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    let command = (variables + ["certsign-bench", String(repetitions)]).joined(separator: " ")
    try BenchmarksFile.write(harness, command: command, to: benchmarksFile)
    print("certsign-bench: wrote \(benchmarksFile.path)")
}
