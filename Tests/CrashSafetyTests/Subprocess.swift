import CertificateProvidersTesting
import Foundation
import Glibc
import TestSupport

/// Starts the real `certsign` binary with `posix_spawn`, so a test can `kill -9` it at a chosen
/// moment and tell "exited 0 before the kill" from "killed".
enum Subprocess {

    /// How a process ended.
    enum Outcome: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        var succeeded: Bool { self == .exited(0) }
        var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signaled(let signal): "signal \(signal)"
            }
        }
    }

    struct SpawnError: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts `certsign arguments` with stdin from /dev/null and stdout/stderr into `log`.`out`/`.err`.
    /// `via` runs it under a wrapper command (`strace …`), found on PATH.
    static func start(
        _ arguments: [String],
        environment: [String: String],
        log: String,
        via wrapper: [String] = []
    ) throws -> pid_t {
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let executable = wrapper.first.map { ExternalTool.path(of: $0) ?? $0 } ?? CLI.binary
        let argv = [executable] + wrapper.dropFirst() + (wrapper.isEmpty ? [] : [CLI.binary]) + arguments
        let cArguments = argv.map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for argument in cArguments { free(argument) }
            for entry in envp { free(entry) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log + ".out", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, log + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, nil, cArguments, envp)
        guard status == 0 else {
            throw SpawnError(description: "posix_spawn \(executable): \(String(cString: strerror(status)))")
        }
        return pid
    }

    /// Reaps `pid`.
    static func wait(_ pid: pid_t) -> Outcome {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
    }

    /// Runs to completion and returns the outcome and the wall time in seconds.
    static func run(_ arguments: [String], environment: [String: String], log: String) throws -> (Outcome, Double) {
        let began = Date()
        let pid = try start(arguments, environment: environment, log: log)
        let outcome = wait(pid)
        return (outcome, Date().timeIntervalSince(began))
    }

    /// Starts the process and sends SIGKILL after `delay` seconds unless it ended first (polled
    /// every half millisecond, so a run that ends early reports how long it took).
    /// - Returns: the outcome, and the run time when the process ended by itself before the kill.
    static func runKilled(
        after delay: Double,
        _ arguments: [String],
        environment: [String: String],
        log: String
    ) throws -> (outcome: Outcome, finishedIn: Double?) {
        let began = Date()
        return try runKilled(
            when: { Date().timeIntervalSince(began) >= delay },
            arguments,
            environment: environment,
            log: log
        )
    }

    /// Starts the process and sends SIGKILL as soon as `condition` holds (checked every half
    /// millisecond, after checking whether the process ended), so a kill can be aimed at what a run
    /// has done (files it wrote) instead of at a guessed time, which drifts with the machine's load.
    /// A run that is still going after `timeout` seconds is killed all the same.
    /// - Returns: the outcome, and the run time when the process ended by itself before the kill.
    static func runKilled(
        when condition: () -> Bool,
        timeout: Double = 900,
        _ arguments: [String],
        environment: [String: String],
        log: String
    ) throws -> (outcome: Outcome, finishedIn: Double?) {
        let began = Date()
        let pid = try start(arguments, environment: environment, log: log)
        var status: Int32 = 0
        while Date().timeIntervalSince(began) < timeout {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid {
                let signal = status & 0x7F
                return (
                    signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal), Date().timeIntervalSince(began)
                )
            }
            if condition() { break }
            usleep(500)
        }
        kill(pid, SIGKILL)
        return (wait(pid), nil)
    }

    /// The text a run wrote to stderr (for failure messages).
    /// With `--json`, a document that fails among others is reported only on stdout, in `results`: its
    /// distinct `code: error` lines follow (with how many documents had each, at most five kinds).
    static func errors(_ log: String) -> String {
        let standardError = (try? String(contentsOfFile: log + ".err", encoding: .utf8)) ?? ""
        let failed = failedResults(log)
        return failed.isEmpty ? standardError : standardError + "; failed results on stdout: " + failed
    }

    /// The failed entries of a `--json` run's `results` (stdout), counted by `code: error`.
    private static func failedResults(_ log: String) -> String {
        guard let data = FileManager.default.contents(atPath: log + ".out"),
            let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let results = document["results"] as? [[String: Any]]
        else { return "" }
        var counts: [String: Int] = [:]
        for result in results where result["status"] as? String == "failed" {
            counts["\(result["code"] as? String ?? "?"): \(result["error"] as? String ?? "?")", default: 0] += 1
        }
        return counts.sorted { $0.value > $1.value }.prefix(5).map { "\($0.value)× \($0.key)" }
            .joined(separator: "; ")
    }
}
