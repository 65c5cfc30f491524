import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One emulator serves a `--state` directory at a time: a second one is refused, naming the process
/// that serves it, and leaves `state.json` as it is; once the first stops, the next one starts.
@Suite(.enabled(if: CLI.isBuilt, "the certsign binary is not built"))
struct EmulatorStateLockTests {
    @Test("a second emulator on the same --state: exit 1 naming the first one's process; state.json untouched")
    func secondEmulatorIsRefused() throws {
        let directory = try TemporaryDirectory()
        let state = directory.path("state")
        let home = directory.path("home")
        let first = try EmulatorStateCommandTests.RunningEmulator(["--port", "0", "--state", state], home: home)
        defer { first.stop() }
        let before = try #require(FileManager.default.contents(atPath: state + "/state.json"))
        // timeout(1) ends a second emulator that serves (exit 124): what happened before the lock.
        let second = try EmulatorStateCommandTests.runEnding(["emulator", "--port", "0", "--state", state], home: home)
        #expect(second.status == 1, "\(second.output) \(second.errorOutput)")
        let holder =
            (try? String(contentsOfFile: state + "/lock", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "(no lock file)"
        let commandLine = (try? String(contentsOfFile: "/proc/\(holder)/cmdline", encoding: .utf8)) ?? ""
        #expect(commandLine.contains("certsign-emulator"), "the lock names \(holder): \(commandLine.debugDescription)")
        #expect(second.errorOutput.contains("is in use: process \(holder) serves it"), "\(second.errorOutput)")
        #expect(FileManager.default.contents(atPath: state + "/state.json") == before, "state.json was rewritten")

        first.stop()
        let next = try EmulatorReadinessTests.startInBackground(
            ["--port", "0", "--state", state, "--ready-file", directory.path("next.url")],
            home: home
        )
        defer { if next.isRunning { kill(next.processIdentifier, SIGKILL) } }
        let waited = try EmulatorStateCommandTests.runEnding(
            ["emulator", "wait", directory.path("next.url")],
            home: home
        )
        #expect(waited.status == 0, "\(waited.errorOutput)")
    }
}
