// certsign-bench: `make bench`. Release build; every figure is printed beside a baseline measured in
// the same run on the same machine, with the ratio and the goal the issues set.
import Foundation

let arguments = CommandLine.arguments.dropFirst()
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
    try await runSigningBenchmarks(harness)  // first: its child processes exit inside it
}
// Before the others: its child processes exit inside it.
if suites.contains("pdf") { try await runPDFBenchmarks(harness) }
if suites.contains("pkcs12") { try await runPKCS12Benchmarks(harness) }
if suites.contains("pkcs12-store") { try await runPKCS12StoreUnlockBenchmark(harness) }
if suites.contains("fmp") { try await runFMPBenchmarks(harness) }
if suites.contains("cryptopro") { try await runCryptoProBenchmarks(harness) }
if suites.contains("pkcs11") { try await runPKCS11Benchmarks(harness) }
if suites.contains("gost") { try await runGOSTBenchmarks(harness) }
if suites.contains("verify") { try await runVerifyBenchmarks(harness) }

harness.printTable()
