import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A script that starts the emulator in the background waits for it without a sleep:
/// `--ready-file FILE` is written once it listens, `certsign emulator wait FILE` returns then.
@Suite(
    "certsign emulator --ready-file and certsign emulator wait",
    .enabled(if: CLI.isBuilt, "the certsign binary is not built")
)
struct EmulatorReadinessTests {
    /// `certsign emulator ARGUMENTS` in the background, its output discarded (a script's `&`).
    static func startInBackground(_ arguments: [String], home: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = ["emulator"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["CERTSIGN_HOME": home]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test("emulator wait returns the URL once it listens (the CA file is there); the file goes when it stops")
    func waitsForTheReadyFile() throws {
        let directory = try TemporaryDirectory()
        let readyFile = directory.path("emulator.url")
        let caFile = directory.path("emulator-ca.pem")
        let emulator = try Self.startInBackground(
            ["--port", "0", "--ca-out", caFile, "--ready-file", readyFile],
            home: directory.path("home")
        )
        defer { if emulator.isRunning { kill(emulator.processIdentifier, SIGKILL) } }
        let waited = try EmulatorStateCommandTests.runEnding(
            ["emulator", "wait", readyFile],
            home: directory.path("home")
        )
        #expect(waited.status == 0, "\(waited.errorOutput)")
        let url = waited.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(url.hasPrefix("http://127.0.0.1:"), "\(waited.output)")
        #expect(FileManager.default.fileExists(atPath: caFile))
        let crl = try ExternalTool.run("curl", ["-sf", "-o", "/dev/null", url + "crl"])
        #expect(crl.succeeded, "the emulator at \(url) did not answer: \(crl.errorOutput)")
        // certsign-emulator takes the same command.
        let emulatorProgram = try #require(ExternalTool.builtProduct("certsign-emulator"))
        let direct = try ExternalTool.run("timeout", ["30", emulatorProgram, "--json", "wait", readyFile])
        #expect(direct.status == 0, "\(direct.errorOutput)")
        #expect(try CLI.json(direct)["url"] as? String == url)
        kill(emulator.processIdentifier, SIGTERM)
        emulator.waitUntilExit()
        #expect(!FileManager.default.fileExists(atPath: readyFile), "the ready file outlived the emulator")
    }

    @Test("a ready file naming a port nobody listens on is not ready: exit 1 naming the file")
    func staleReadyFileIsNotReady() throws {
        let directory = try TemporaryDirectory()
        // A port that was free a moment ago: nothing listens on it.
        let port = try ReadmeExamplesTests.World.freePort()
        let readyFile = try directory.write("emulator.url", text: "http://127.0.0.1:\(port)/\n")
        let result = try EmulatorStateCommandTests.runEnding(
            ["--json", "emulator", "wait", readyFile, "--timeout", "1"],
            home: directory.path("home")
        )
        #expect(result.status == 1, "\(result.output) \(result.errorOutput)")
        #expect(result.errorOutput.contains(readyFile), "\(result.errorOutput)")
        let error = try CLI.json(result)["error"] as? [String: Any]
        #expect(error?["code"] as? String == "timeout")
    }
}
