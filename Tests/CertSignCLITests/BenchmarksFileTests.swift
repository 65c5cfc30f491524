import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `make bench` writes BENCHMARKS.md: a real run of `certsign-bench --write FILE` (the verify
/// suite over a few files, `certsign verify` against pyHanko) puts that suite's table into its section,
/// keeps the run before it, drops anything older and leaves the other suites and the hand-written text
/// as they were.
@Suite(.serialized) struct BenchmarksFileTests {
    /// A suite's section of BENCHMARKS.md, markers included.
    static func section(_ suite: String, of text: String) -> String? {
        guard let start = text.range(of: "<!-- certsign-bench suite=\(suite) -->"),
            let end = text.range(of: "<!-- /certsign-bench suite=\(suite) -->", range: start.upperBound..<text.endIndex)
        else { return nil }
        return String(text[start.lowerBound..<end.upperBound])
    }

    /// The table rows of a Markdown text (lines starting with `|`, header and rule left out).
    static func rows(of text: String) -> [[String]] {
        text.split(separator: "\n").filter { $0.hasPrefix("| ") && !$0.hasPrefix("| benchmark") }.map { line in
            line.dropFirst(2).dropLast(2).components(separatedBy: " | ")
        }
    }

    /// Runs the debug `certsign-bench` (one round a figure; 4 signatures and 2 PDFs) writing into `file`.
    static func runBench(writing file: String) throws -> ExternalTool.Result {
        let bench = try #require(ExternalTool.builtProduct("certsign-bench"), "certsign-bench is not built")
        return try ExternalTool.run(
            bench,
            ["1", "--write", file, "--suites", "verify", "--verify-documents", "4", "--verify-pdfs=2"]
        )
    }

    @Test("a bench run replaces its suite's section and keeps one earlier run", .timeLimit(.minutes(10)))
    func benchWritesItsSuite() throws {
        let original = ReadmeTests.document("BENCHMARKS.md")
        let oldVerify = try #require(Self.section("verify", of: original))
        let directory = try TemporaryDirectory(prefix: "benchmarks-file")
        let file = try directory.write("BENCHMARKS.md", text: original)

        let first = try Self.runBench(writing: file)
        #expect(first.succeeded, "\(first.output)\n\(first.errorOutput)")
        let afterFirst = try String(contentsOfFile: file, encoding: .utf8)
        let verify = try #require(Self.section("verify", of: afterFirst))
        // Everything but the verify section is as it was: the other suites' tables, the hand-written text.
        #expect(
            afterFirst.replacingOccurrences(of: verify, with: "")
                == original.replacingOccurrences(of: oldVerify, with: "")
        )
        let parts = verify.components(separatedBy: "<!-- certsign-bench earlier -->")
        #expect(parts.count == 2)
        let latest = parts[0]
        let today = ISO8601DateFormatter.string(
            from: Date(),
            timeZone: TimeZone(identifier: "UTC")!,
            formatOptions: [.withFullDate]
        )
        #expect(latest.contains("### Latest run: \(today) "), "\(latest)")
        #if DEBUG
        #expect(
            latest.contains(
                "certsign-bench 1 --suites verify --verify-documents 4 --verify-pdfs=2` (debug build, 1 run a figure) on "
            ),
            "\(latest)"
        )
        #endif
        // Each marker stands on its own after a blank line, so no table or list swallows it.
        #expect(!verify.contains("|\n<!--") && !verify.contains(")\n<!--"))
        #expect(!latest.contains(file) && !latest.contains("--write"))
        #expect(latest.contains("\(ProcessInfo.processInfo.processorCount) cores") && latest.contains("load average"))
        #expect(latest.contains("| benchmark | ours (median [min–max]) | baseline |"))
        let rows = Self.rows(of: latest)
        #expect(
            rows.map { $0[0] } == [
                "certsign verify 4 detached P-256 .p7s (one call)", "certsign verify 2 signed 1 MiB PDFs (one call)",
            ]
        )
        for row in rows {
            #expect(row.count == 7 && row[2].hasPrefix("pyHanko loop"))
            #expect((Double(row[4]) ?? 0) > 0, "ratio \(row[4])")
        }
        // The run that was latest is now the run before, with its table; nothing older is kept.
        #expect(parts[1].contains("### The run before: 2026-12-02 (sixth session)"))
        #expect(Self.rows(of: parts[1]) == Self.rows(of: oldVerify))

        let second = try Self.runBench(writing: file)
        #expect(second.succeeded, "\(second.output)\n\(second.errorOutput)")
        let afterSecond = try String(contentsOfFile: file, encoding: .utf8)
        let verifyAgain = try #require(Self.section("verify", of: afterSecond))
        #expect(verifyAgain.components(separatedBy: "### The run before").count == 2)
        #expect(!verifyAgain.contains("sixth session"))
        #expect(Self.rows(of: verifyAgain.components(separatedBy: "<!-- certsign-bench earlier -->")[1]) == rows)
        // A run neither adds nor drops a suite's section.
        let marker = "<!-- certsign-bench suite="
        #expect(afterSecond.components(separatedBy: marker).count == original.components(separatedBy: marker).count)
    }

    @Test("without a file the bench starts one from its skeleton; a bad command line is a usage error")
    func benchStartsAFileAndRefusesABadCommandLine() throws {
        let directory = try TemporaryDirectory(prefix: "benchmarks-new")
        let bench = try #require(ExternalTool.builtProduct("certsign-bench"), "certsign-bench is not built")
        let file = directory.path("BENCHMARKS.md")
        let badLines = [
            ["1", "--write"], ["--suites", "no-such-suite", "--write", file], ["--big-mib", "0", "--write", file],
            ["--no-such-flag", "--write", file],
        ]
        for bad in badLines {
            let usage = try ExternalTool.run(bench, bad)
            #expect(usage.status == 64 && usage.errorOutput.contains("usage: certsign-bench"), "\(bad)")
        }
        #expect(!FileManager.default.fileExists(atPath: file))
        let result = try ExternalTool.run(
            bench,
            ["1", "--write", file, "--suites", "verify", "--verify-documents", "1", "--verify-pdfs", "1"]
        )
        #expect(result.succeeded, "\(result.errorOutput)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.hasPrefix("# Benchmarks\n") && text.contains("<!-- certsign-bench sections end -->"))
        // The skeleton with the one suite that ran, before the end marker.
        #expect(text.components(separatedBy: "<!-- certsign-bench suite=").count == 2)
        #expect(text.range(of: "suite=verify")!.lowerBound < text.range(of: "sections end")!.lowerBound)
    }
}
