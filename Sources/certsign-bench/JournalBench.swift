import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport

/// The journal rows: `certsign sign` of the CLI batch's documents (default 2000 × 1 KiB,
/// P-256, `--out-dir`, fsync kept) into a PostgreSQL journal (a private cluster on loopback, started
/// here) against the same batch into the store's SQLite journal, measured alternately; then 4
/// workers at once into the PostgreSQL journal, each signing a quarter, total docs/s against one
/// worker's rate.
func runJournalBenchmarks(_ harness: BenchHarness) async throws {
    guard let certsign = harness.certsignBesideBench(skipping: "journal rows") else { return }
    let cluster: PostgresCluster
    do { cluster = try PostgresCluster() } catch {
        harness.note("journal rows skipped: \(error)")
        return
    }
    let batch = try CLIBatch(harness, certsign: certsign)
    _ = try batch.importIdentity(try TestPKI().issueLeaf(subject: "CN=Journal Bench", keyType: .p256), "journal")
    let postgres = batch.environment.merging(cluster.environment) { $1 }.merging(["CERTSIGN_JOURNAL": cluster.uri()]) {
        $1
    }
    func arguments(_ paths: [String], _ output: URL) -> [String] {
        ["sign"] + paths + ["--identity", "journal", "--password-env", "P12PASS", "--out-dir", output.path]
    }
    var intoSQLite: [Double] = []
    var intoPostgres: [Double] = []
    var fourWorkers: [Double] = []
    let paths = batch.paths
    for round in 0..<max(3, min(harness.repetitions, 5)) {
        let sqliteOutput = batch.directory.appendingPathComponent("journal-sqlite-\(round)")
        intoSQLite.append(
            try harness.documentsPerSecond(
                certsign,
                arguments(paths, sqliteOutput),
                environment: batch.environment,
                output: sqliteOutput,
                count: paths.count
            )
        )
        let postgresOutput = batch.directory.appendingPathComponent("journal-postgres-\(round)")
        intoPostgres.append(
            try harness.documentsPerSecond(
                certsign,
                arguments(paths, postgresOutput),
                environment: postgres,
                output: postgresOutput,
                count: paths.count
            )
        )
        fourWorkers.append(try concurrentRate(certsign, paths, round, batch, postgres, arguments))
    }
    let label = "certsign sign \(paths.count) × 1 KiB P-256 --out-dir into PostgreSQL (loopback)"
    harness.record(
        label,
        ours: Sample(values: intoPostgres),
        baseline: Sample(values: intoSQLite),
        baselineName: "into SQLite docs/s",
        unit: .perSecond,
        goal: 0.7,
        higherIsBetter: true
    )
    harness.record(
        "4 workers × \(paths.count / 4) documents at once into one PostgreSQL journal (total)",
        ours: Sample(values: fourWorkers),
        baseline: Sample(values: intoPostgres),
        baselineName: "1 worker docs/s",
        unit: .perSecond,
        goal: nil,
        higherIsBetter: true
    )
    let result = try harness.runCommand(certsign, ["journal", "verify"], environment: postgres)
    guard result.status == 0 else { throw BenchError("journal verify failed after the bench: \(result.error)") }
}

/// Total documents per second of 4 `certsign sign` processes started at once, each on a quarter.
private func concurrentRate(
    _ certsign: String,
    _ paths: [String],
    _ round: Int,
    _ batch: CLIBatch,
    _ environment: [String: String],
    _ arguments: ([String], URL) -> [String]
) throws -> Double {
    let quarter = (paths.count + 3) / 4
    let start = DispatchTime.now().uptimeNanoseconds
    let processes = try stride(from: 0, to: paths.count, by: quarter).enumerated().map { worker, first in
        let output = batch.directory.appendingPathComponent("journal-workers-\(round)-\(worker)")
        try? FileManager.default.removeItem(at: output)
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: certsign)
        process.arguments = arguments(Array(paths[first..<min(first + quarter, paths.count)]), output)
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }
    for process in processes {
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("a journal worker failed") }
    }
    return Double(paths.count) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}
