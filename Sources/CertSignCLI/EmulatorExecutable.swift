import CertificateProviders
import Foundation
import JSON

/// The `certsign-emulator` program that `certsign emulator …` and `certsign demo` run: the one
/// installed beside the running `certsign` (the directory of `/proc/self/exe`), or the one
/// `$CERTSIGN_EMULATOR` names for installs that keep it elsewhere.
struct EmulatorExecutable {
    /// The program's file name.
    static let name = "certsign-emulator"
    /// The environment variable that names the program's path instead.
    static let environmentVariable = "CERTSIGN_EMULATOR"

    /// The program's path.
    let path: String

    /// The environment the program runs with: `environment` and `CERTSIGN_EMULATOR_PARENT` (this
    /// process's id), so that it stops when this process ends, even by SIGKILL.
    static func childEnvironment(_ environment: [String: String]) -> [String: String] {
        environment.merging(["CERTSIGN_EMULATOR_PARENT": String(getpid())]) { _, new in new }
    }

    /// Finds the program.
    /// - Throws: ``EmulatorUnavailable`` naming the path it looked at when there is no executable file there.
    static func locate(environment: [String: String]) throws -> EmulatorExecutable {
        if let override = environment[environmentVariable], !override.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: override) else {
                throw EmulatorUnavailable(
                    message:
                        "\(name) not found: $\(environmentVariable) names \(override), which is not an executable file",
                    hint:
                        "point $\(environmentVariable) at the \(name) program, or unset it to use the one beside certsign"
                )
            }
            return EmulatorExecutable(path: override)
        }
        let running =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let candidate = URL(fileURLWithPath: running).deletingLastPathComponent().appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: candidate) else {
            throw EmulatorUnavailable(
                message: "\(name) not found: looked for \(candidate) (beside \(running))",
                hint: "install it beside certsign ('make install' installs both), or set $\(environmentVariable)=PATH"
            )
        }
        return EmulatorExecutable(path: candidate)
    }

    /// Runs the program with `arguments` (standard input, output and error shared; SIGINT and SIGTERM
    /// passed on) and returns its exit code.
    func run(arguments: [String], environment: [String: String]) async throws -> Int32 {
        let child = try ChildProcess.start(path, arguments: arguments, environment: Self.childEnvironment(environment))
        return await child.wait()
    }

    /// Starts the program as `certsign-emulator --json ARGUMENTS` and reads its ready document
    /// (`{"url", …}`, printed once it listens).
    /// - Returns: the running child (the caller stops it on every path) and the emulator's URL.
    /// - Throws: `.serverRejected` when it ends, or prints no ready line within `timeout`, before it is ready.
    func start(
        arguments: [String],
        environment: [String: String],
        timeout: Duration = .seconds(60)
    ) async throws -> (ChildProcess, URL) {
        let child = try ChildProcess.start(
            path,
            arguments: ["--json"] + arguments,
            environment: Self.childEnvironment(environment),
            readingOutput: true
        )
        // A program that never gets ready is ended: its pipe closes and the read below returns.
        let deadline = Task {
            try await Task.sleep(for: timeout)
            child.send(SIGKILL)
        }
        defer { deadline.cancel() }
        let document = await Self.firstDocument(of: child.output)
        guard let url = document?["url"]?.stringValue.flatMap(URL.init(string:)) else {
            let status = await child.stop()
            throw CertificateProviderError(
                .serverRejected,
                "\(path) ended or printed no ready line (exit code \(status)); run 'certsign emulator' to see why"
            )
        }
        return (child, url)
    }

    /// The first JSON document on `handle` (`--json` prints it over several lines), read on a thread
    /// of its own (a pipe read blocks); nil when the pipe ends first.
    private static func firstDocument(of handle: FileHandle?) async -> JSONValue? {
        guard let handle else { return nil }
        return await withCheckedContinuation { (continuation: CheckedContinuation<JSONValue?, Never>) in
            Thread.detachNewThread {
                var text: [UInt8] = []
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { return continuation.resume(returning: nil) }
                    text += chunk
                    // Complete once it parses (a document ends with a newline).
                    if text.last == UInt8(ascii: "\n"), let document = try? JSONValue(parsing: text) {
                        return continuation.resume(returning: document)
                    }
                }
            }
        }
    }
}

/// `certsign-emulator` is not where `certsign` looked: exit code 69 (``CertSign/exitUnavailable``).
struct EmulatorUnavailable: Error {
    /// What is missing and where it was looked for.
    let message: String
    /// What to do about it.
    let hint: String
}
