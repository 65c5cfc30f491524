import Foundation

/// One suite's run: when it started and ended, and the machine's 1-minute load average at both ends
/// (the figures move with the load, so BENCHMARKS.md states it beside each table).
struct SuiteRun: Sendable {
    /// The suite's name, as `--suites` spells it.
    let name: String
    let started: Date
    let loadAtStart: String
    private(set) var ended: Date
    private(set) var loadAtEnd: String

    init(name: String) {
        self.name = name
        started = Date()
        loadAtStart = Self.loadAverage()
        ended = started
        loadAtEnd = loadAtStart
    }

    /// Marks the end of the run.
    mutating func finish() {
        ended = Date()
        loadAtEnd = Self.loadAverage()
    }

    /// The 1-minute load average (`/proc/loadavg`), or "?" where there is none.
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "?" }
        return text.split(separator: " ").first.map(String.init) ?? "?"
    }
}
