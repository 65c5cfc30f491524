import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// The environment of a CSC client of the emulator (Leonid's secret and PIN), for `--param-env`.
let workerEnvironment = ["CSC_SECRET": StandardSeed.password, "CSC_PIN": StandardSeed.certificatePIN]

/// The provider parameters of Leonid's PIN credential on the emulator at `url`, secrets from
/// ``workerEnvironment``.
func workerProviderArguments(_ url: URL) -> [String] {
    [
        "--param", "url=\(url.absoluteString)", "--param", "clientID=Leonid", "--param-env", "clientSecret=CSC_SECRET",
        "--param", "credentialID=\(pinCredential)", "--param-env", "pin=CSC_PIN",
    ]
}

/// A `certsign` process running in the background, its output in files.
final class BackgroundCertsign {
    let process = Process()
    let output: String
    let errors: String

    init(
        _ arguments: [String],
        environment: [String: String],
        in directory: TemporaryDirectory,
        name: String
    )
        throws
    {
        output = directory.path("\(name).out")
        errors = directory.path("\(name).err")
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }
    var errorText: String { (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "" }
    var outputText: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

    /// Waits for the process to end (at most `seconds`, then kills it and records an issue).
    func wait(seconds: Double = 300) async -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(100)) }
        if process.isRunning {
            Issue.record("certsign \(process.arguments?.first ?? "") did not end: \(errorText)")
            kill(pid, SIGKILL)
        }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
