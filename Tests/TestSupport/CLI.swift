import CertificateProvidersTesting
public import Foundation
import Testing

/// Runs the built `certsign` binary as a subprocess, the way users and scripts do. The one runner every
/// test module uses: it runs the binary this build made, never a `certsign` found on `PATH`.
public enum CLI {
    /// `.build/<config>/certsign`, next to the test bundle. When it is not built, a path that does not
    /// exist, so a run fails ("…/certsign is not installed") instead of finding another certsign.
    public static let binary: String =
        ExternalTool.builtProduct("certsign") ?? "/nonexistent/certsign-is-not-built/certsign"

    /// Whether the binary is built (for `.enabled(if:)`).
    public static var isBuilt: Bool { ExternalTool.builtProduct("certsign") != nil }

    /// Runs `certsign` with a private store directory and the given environment; standard input
    /// gets `input` as UTF-8, or the bytes `inputBytes` (a PDF through a pipe).
    @discardableResult
    public static func run(
        _ arguments: [String],
        store: TemporaryDirectory? = nil,
        environment: [String: String] = [:],
        input: String? = nil,
        inputBytes: Data? = nil,
        directory: URL? = nil
    ) throws -> ExternalTool.Result {
        var environment = environment
        if let store { environment["CERTSIGN_HOME"] = store.url.path }
        environment["TZ"] = environment["TZ"] ?? "Europe/Moscow"
        return try ExternalTool.run(
            binary,
            arguments,
            environment: environment,
            input: input.map { Data($0.utf8) } ?? inputBytes,
            directory: directory
        )
    }

    /// Runs `certsign` on a pseudo-terminal (util-linux `script`), as in a person's shell: stdout
    /// and stderr arrive together in `output`.
    public static func runOnTerminal(_ arguments: [String], store: TemporaryDirectory) throws -> ExternalTool.Result {
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let command = ([binary] + arguments).map(quoted).joined(separator: " ")
        return try ExternalTool.run(
            "script",
            ["-qec", command, "/dev/null"],
            environment: ["CERTSIGN_HOME": store.url.path]
        )
    }

    /// Runs certsign on a pseudo-terminal the way a person does: Python's pty module waits until
    /// `prompt` appears, types `typed` and Enter, and returns everything the terminal showed (stdout)
    /// and certsign's exit status. The typed text travels in the environment, never in argv.
    public static func typeOnTerminal(
        _ arguments: [String],
        after prompt: String,
        typing typed: String,
        store: TemporaryDirectory
    ) throws -> ExternalTool.Result {
        let driver = """
            import os, pty, signal, sys
            signal.alarm(120)  # never hang the test run
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[2], sys.argv[2:])
            prompt, seen = sys.argv[1].encode(), b""
            while prompt not in seen:
                chunk = os.read(fd, 1024)
                if not chunk: break
                seen += chunk
            os.write(fd, os.environ["TYPED"].encode() + b"\\n")
            while True:
                try:
                    chunk = os.read(fd, 1024)
                except OSError:
                    break
                if not chunk: break
                seen += chunk
            _, status = os.waitpid(pid, 0)
            sys.stdout.write(seen.decode("utf-8", "replace"))
            sys.exit(os.waitstatus_to_exitcode(status))
            """
        return try ExternalTool.run(
            "python3",
            ["-c", driver, prompt, binary] + arguments,
            environment: ["CERTSIGN_HOME": store.url.path, "TYPED": typed]
        )
    }

    /// Parses stdout as one JSON object.
    public static func json(_ result: ExternalTool.Result) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: result.standardOutput)
        return try #require(object as? [String: Any], "stdout is not a JSON object: \(result.output)")
    }
}
