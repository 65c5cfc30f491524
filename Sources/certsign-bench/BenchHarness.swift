import CertificateProvidersTesting
import Foundation
import TestSupport

/// One measured figure: the median of several runs and their spread.
struct Sample: Sendable {
    var median: Double
    var min: Double
    var max: Double

    /// A sample of one value.
    init(_ value: Double) {
        median = value
        min = value
        max = value
    }
    init(median: Double, min: Double, max: Double) {
        self.median = median
        self.min = min
        self.max = max
    }

    /// Builds a sample from raw values (median, min, max).
    init(values: [Double]) {
        let sorted = values.sorted()
        median =
            sorted.isEmpty
            ? 0
            : (sorted.count % 2 == 1
                ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2)
        min = sorted.first ?? 0
        max = sorted.last ?? 0
    }

    /// Turns a duration sample (seconds for `count` operations) into operations per second.
    func rate(count: Double) -> Sample {
        Sample(median: count / median, min: count / max, max: count / min)
    }
}

/// The unit a row is printed in.
enum Unit: Sendable {
    case seconds, perSecond, mebibytes, microseconds
    var suffix: String {
        switch self {
        case .seconds: return "s"
        case .microseconds: return "µs"
        case .perSecond: return "/s"
        case .mebibytes: return "MiB"
        }
    }
}

/// Collects benchmark rows and prints one table: figure, baseline measured in the same run, ratio,
/// and whether the goal holds.
final class BenchHarness: @unchecked Sendable {
    // Used from one task at a time by main.swift; rows are appended sequentially.
    struct Row {
        /// The suite that measured it (`signing`, `fmp`, …).
        var suite: String
        var name: String
        var ours: Sample
        var baseline: Sample
        var baselineName: String
        var unit: Unit
        var goal: Double?
        var higherIsBetter: Bool
        /// The median of per-round ratios, for rows measured in interleaved pairs (nil otherwise).
        var pairedRatio: Double?
        var ratio: Double { higherIsBetter ? ours.median / baseline.median : baseline.median / ours.median }
        var holds: Bool? { goal.map { ratio >= $0 } }
    }

    /// What this run measures (the command line).
    let options: BenchOptions
    /// Repetitions per measurement.
    var repetitions: Int { options.runs }
    /// Scratch directory for big files (removed at the end).
    let scratch: URL
    private(set) var rows: [Row] = []
    /// Lines printed under the table, each with the suite that added it.
    private(set) var notes: [(suite: String, text: String)] = []
    /// The suites run so far, in order, with when and under what load.
    private(set) var suiteRuns: [SuiteRun] = []
    /// The suite rows and notes are recorded for.
    private var currentSuite = ""

    init(options: BenchOptions, scratch: URL) {
        self.options = options
        self.scratch = scratch
    }

    /// Runs one suite: its rows and notes are recorded under `name`, with its start, end and load.
    /// A failing suite ends the run with exit 1, naming the suite and the error, after printing the rows
    /// measured before it; BENCHMARKS.md is not written.
    func run(suite name: String, _ body: () async throws -> Void) async throws {
        currentSuite = name
        var run = SuiteRun(name: name)
        defer {
            run.finish()
            suiteRuns.append(run)
            currentSuite = ""
        }
        do {
            try await body()
        } catch {
            printTable()
            FileHandle.standardError.write(Data("certsign-bench: the \(name) suite failed: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Runs a suite whose set-up may be missing on this machine (a token library, a tool): a failure
    /// becomes a note under the table instead of ending the whole run.
    func runNotingFailure(suite name: String, _ body: () async throws -> Void) async throws {
        try await run(suite: name) {
            do { try await body() } catch { note("\(name) benchmarks could not run: \(error)") }
        }
    }

    /// Runs `body` `repetitions` times (after one warm-up) and returns the seconds per run.
    func time(warmUp: Bool = true, _ body: () async throws -> Void) async rethrows -> Sample {
        if warmUp { try await body() }
        var values: [Double] = []
        for _ in 0..<repetitions {
            let start = DispatchTime.now().uptimeNanoseconds
            try await body()
            values.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        return Sample(values: values)
    }

    /// Runs a command `repetitions` times (after one warm-up) and returns seconds per run.
    /// - Throws: when the command is missing or exits non-zero.
    func timeCommand(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Sample {
        var values: [Double] = []
        for index in 0...repetitions {
            let start = DispatchTime.now().uptimeNanoseconds
            let result = try runCommand(tool, arguments, environment: environment)
            guard result.status == 0 else {
                throw BenchError("\(tool) \(arguments.joined(separator: " ")) failed: \(result.error)")
            }
            if index > 0 { values.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9) }
        }
        return Sample(values: values)
    }

    /// Runs a command once (``ExternalTool/run(_:_:environment:input:directory:)``) and returns its
    /// status and outputs.
    func runCommand(
        _ tool: String,
        _ arguments: [String],
        environment: [String: String] = [:]
    ) throws -> (status: Int32, output: String, error: String) {
        let result = try ExternalTool.run(tool, arguments, environment: environment)
        return (result.status, result.output, result.errorOutput)
    }

    /// The `certsign` built beside this bench (release, by `make bench`), or nil with a note saying
    /// that the `rows` of this suite are skipped.
    func certsignBesideBench(skipping rows: String) -> String? {
        let executable = Bundle.main.executablePath.map {
            URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("certsign").path
        }
        guard let executable, FileManager.default.isExecutableFile(atPath: executable) else {
            note("\(rows) skipped: build the certsign product in release first (make bench does)")
            return nil
        }
        return executable
    }

    /// Adds a row.
    func record(
        _ name: String,
        ours: Sample,
        baseline: Sample,
        baselineName: String,
        unit: Unit,
        goal: Double? = nil,
        higherIsBetter: Bool,
        pairedRatio: Double? = nil
    ) {
        rows.append(
            Row(
                suite: currentSuite,
                name: name,
                ours: ours,
                baseline: baseline,
                baselineName: baselineName,
                unit: unit,
                goal: goal,
                higherIsBetter: higherIsBetter,
                pairedRatio: pairedRatio
            )
        )
    }

    /// Adds a line printed under the table.
    func note(_ text: String) { notes.append((currentSuite, text)) }

    /// The table's column titles.
    static let header = [
        "benchmark", "ours (median [min–max])", "baseline", "baseline (median [min–max])", "ratio", "goal",
        "paired ratio",
    ]

    /// One row's cells, in the order of ``header``.
    static func cells(_ row: Row) -> [String] {
        func format(_ sample: Sample, _ unit: Unit) -> String {
            func number(_ value: Double) -> String {
                value >= 1000
                    ? String(format: "%.0f", value)
                    : value >= 10 ? String(format: "%.1f", value) : String(format: "%.3f", value)
            }
            return "\(number(sample.median))\(unit.suffix) [\(number(sample.min))–\(number(sample.max))]"
        }
        let goal = row.goal.map { String(format: "≥ %.2f %@", $0, row.holds == true ? "ok" : "MISSED") } ?? "-"
        return [
            row.name, format(row.ours, row.unit), row.baselineName, format(row.baseline, row.unit),
            String(format: "%.2f", row.ratio), goal, row.pairedRatio.map { String(format: "%.2f", $0) } ?? "-",
        ]
    }

    /// Prints the table.
    func printTable() {
        let header = Self.header
        let lines: [[String]] = [header] + rows.map(Self.cells)
        let widths = (0..<header.count).map { column in lines.map { $0[column].count }.max() ?? 0 }
        for (index, line) in lines.enumerated() {
            print(
                zip(line, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
            )
            if index == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        for note in notes { print("note: \(note.text)") }
    }
}

/// A benchmark that could not run.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
