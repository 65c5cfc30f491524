import Foundation

/// BENCHMARKS.md, which `make bench` (`certsign-bench --write FILE`) keeps: a hand-written introduction
/// and notes, and one generated section per suite holding the suite's latest run and the run before it
/// (older runs are dropped; git history keeps them). A run replaces only the sections of the suites it
/// ran, so `--suites verify` leaves the other suites' tables as they were.
enum BenchmarksFile {
    /// The line that opens a suite's generated section.
    static func begin(_ suite: String) -> String { "<!-- certsign-bench suite=\(suite) -->" }
    /// The line that closes it.
    static func end(_ suite: String) -> String { "<!-- /certsign-bench suite=\(suite) -->" }
    /// Separates a section's latest run from the run before it.
    static let earlier = "<!-- certsign-bench earlier -->"
    /// New suites' sections go before this line (at the end of the file when it is missing).
    static let sectionsEnd = "<!-- certsign-bench sections end -->"
    static let latestTitle = "### Latest run"
    static let earlierTitle = "### The run before"

    /// The file a first run writes when there is none.
    static let skeleton = """
        # Benchmarks

        Written by `make bench` (`certsign-bench --write BENCHMARKS.md`): each figure beside a baseline
        measured in the same run on the same machine, the ratio and the goal the issues set. Each suite
        keeps its latest run and the run before it.

        \(sectionsEnd)

        """

    /// Writes the suites `harness` ran into the file at `url` (created from ``skeleton`` when missing),
    /// atomically.
    static func write(_ harness: BenchHarness, command: String, to url: URL) throws {
        var text = (try? String(contentsOf: url, encoding: .utf8)) ?? skeleton
        let machine = machineFacts(harness)
        for run in harness.suiteRuns {
            text = replacing(
                suite: run.name,
                with: latestRun(run, harness, machine: machine, command: command),
                in: text
            )
        }
        try Data(text.utf8).write(to: url, options: .atomic)
    }

    /// The latest run of one suite in Markdown: when, what ran, on what machine, under what load, the
    /// table and the notes.
    static func latestRun(_ run: SuiteRun, _ harness: BenchHarness, machine: String, command: String) -> String {
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.timeZone = TimeZone(identifier: "UTC")
        day.dateFormat = "yyyy-MM-dd HH:mm"
        let hour = DateFormatter()
        hour.locale = day.locale
        hour.timeZone = day.timeZone
        hour.dateFormat = "HH:mm"
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        var lines = [
            "\(latestTitle): \(day.string(from: run.started))–\(hour.string(from: run.ended)) UTC",
            "",
            "`\(command)` (\(build) build, \(harness.repetitions) run\(harness.repetitions == 1 ? "" : "s") a figure) "
                + "on \(machine); 1-minute load average \(run.loadAtStart) at the start, \(run.loadAtEnd) at the end.",
            "",
        ]
        let rows = harness.rows.filter { $0.suite == run.name }
        if rows.isEmpty {
            lines.append("No rows in this run (see the notes).")
        } else {
            func markdown(_ cells: [String]) -> String {
                "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |"
            }
            lines.append(markdown(BenchHarness.header))
            lines.append("|" + String(repeating: "---|", count: BenchHarness.header.count))
            lines += rows.map { markdown(BenchHarness.cells($0)) }
        }
        let notes = harness.notes.filter { $0.suite == run.name }
        if !notes.isEmpty { lines += [""] + notes.map { "- \($0.text)" } }
        return lines.joined(separator: "\n") + "\n\n"
    }

    /// `text` with `suite`'s section holding `latest` first and the section's previous latest run,
    /// retitled, after it; a suite without a section gets a new one before ``sectionsEnd``.
    static func replacing(suite: String, with latest: String, in text: String) -> String {
        let heading = "## \(suite)\n\n"
        guard let start = text.range(of: begin(suite) + "\n"),
            let stop = text.range(of: end(suite), range: start.upperBound..<text.endIndex)
        else {
            let section = begin(suite) + "\n" + heading + latest + end(suite) + "\n\n"
            guard let place = text.range(of: sectionsEnd) else { return text + "\n" + section }
            return text.replacingCharacters(in: place.lowerBound..<place.lowerBound, with: section)
        }
        let body = text[start.upperBound..<stop.lowerBound]
        let previous = body.components(separatedBy: earlier)[0]
        var section = begin(suite) + "\n" + heading + latest
        if let title = previous.range(of: latestTitle) {
            let demoted = earlierTitle + previous[title.upperBound...].trimmingCharacters(in: .newlines)
            section += earlier + "\n" + demoted + "\n\n"
        }
        return text.replacingCharacters(in: start.lowerBound..<stop.lowerBound, with: section)
    }

    /// The machine in one phrase: "2 cores, 23.4 GiB, Debian GNU/Linux 12 (bookworm), Linux 6.1.0-…,
    /// OpenSSL 3.0.…".
    static func machineFacts(_ harness: BenchHarness) -> String {
        let info = ProcessInfo.processInfo
        let memory = String(format: "%.1f GiB", Double(info.physicalMemory) / 1_073_741_824)
        var facts = ["\(info.processorCount) cores", memory]
        if let release = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8),
            let line = release.split(separator: "\n").first(where: { $0.hasPrefix("PRETTY_NAME=") })
        {
            facts.append(line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
        }
        if let kernel = try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8) {
            facts.append("Linux " + kernel.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        if let openssl = try? harness.runCommand("openssl", ["version"]), openssl.status == 0 {
            facts.append(openssl.output.split(separator: " ").prefix(2).joined(separator: " "))
        }
        return facts.joined(separator: ", ")
    }
}
