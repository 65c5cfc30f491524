internal import CSystemShims
import CertificateProviders
public import Foundation
import RemoteProviderSupport

/// The `certsign` command-line tool as a library: `main.swift` calls ``CertSign/main(arguments:environment:)``
/// and exits with its result, and tests call it in-process or run the built binary.
///
/// Exit codes: 0 success, 1 the operation failed (wrong password, a FAILED signature, the server said
/// no), 2 `verify` found no FAILED signature but an INDETERMINATE one, 64 usage error (unknown command
/// or flag, missing argument).
public enum CertSign {
    /// The tool's version.
    public static let version = "0.4.0"

    /// Exit code for success.
    public static let exitSuccess: Int32 = 0
    /// Exit code for a failed operation.
    public static let exitFailure: Int32 = 1
    /// Exit code of `verify` when no signature FAILED and at least one is INDETERMINATE (ETSI EN 319
    /// 102-1: the data to decide was missing, e.g. no chain to the trust anchors).
    public static let exitIndeterminate: Int32 = 2
    /// Exit code for a usage error (BSD `EX_USAGE`).
    public static let exitUsage: Int32 = 64
    /// Exit code when `certsign emulator` or `certsign demo` cannot find the `certsign-emulator` program
    /// (BSD `EX_UNAVAILABLE`).
    public static let exitUnavailable: Int32 = 69

    /// Keeps the process's memory (passwords, PINs, unlocked keys) out of core dumps and away from
    /// other processes of the same user: core file size 0 and not dumpable (which also refuses
    /// `ptrace` attachment and `/proc/<pid>/mem` to non-root users). `certsign`'s `main` calls this
    /// first; it holds until the process exits.
    /// - Returns: whether both settings took effect.
    @discardableResult
    public static func disableCoreDumps() -> Bool {
        CSystemShims_disableCoreDumps() == 0
    }

    /// Runs one command line.
    ///
    /// - Parameters:
    ///   - arguments: the arguments after the program name.
    ///   - environment: the process environment (secrets may be read from it by name).
    /// - Returns: the exit code.
    public static func main(
        arguments: [String],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async -> Int32 {
        await main(arguments: arguments, environment: environment, emulatorRunner: nil)
    }

    /// Runs `certsign-emulator`'s command line: `certsign emulator ARGUMENTS`, with the emulator run in
    /// this process by `runner` (the same options, help, `--json` and errors as `certsign emulator`).
    package static func emulatorMain(
        arguments: [String],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        runner: @escaping EmulatorRunner
    ) async -> Int32 {
        await main(arguments: ["emulator"] + arguments, environment: environment, emulatorRunner: runner)
    }

    private static func main(
        arguments: [String],
        environment: [String: String],
        emulatorRunner: EmulatorRunner?
    ) async -> Int32 {
        let console = Console(environment: environment)
        let json = Invocation.wantsJSON(arguments)
        var command: CommandDescriptor?
        func fail(_ code: String, _ reason: String, hint: String?) {
            // One JSON document per command: a failure after a document was printed (a server's
            // envelope, a batch's results) adds none.
            guard json, !console.wroteStandardOutput else { return }
            console.out(JSONOutput.encode(ErrorDocument(error: .init(code: code, reason: reason, hint: hint))))
        }
        do {
            let invocation = try Invocation.parse(arguments)
            command = invocation.command
            var context = try CommandContext(
                console: console,
                json: invocation.json,
                storeOverride: invocation.store,
                environment: environment
            )
            try context.chooseJournal(invocation.journal)
            context.argumentsWithoutCommandWords = invocation.argumentsWithoutCommandWords
            context.emulatorRunner = emulatorRunner
            context.command = invocation.command
            // The HTTP client's errors (a DSS login's URL check, a TSA's transport) speak the
            // package's codes from here on, with their hints.
            return try await CertificateProviderError.convertingHTTPErrors { try await invocation.run(context) }
        } catch let error as UsageError {
            console.err("certsign: \(Format.printable(error.message))")
            console.err("usage: \(error.usage)")
            fail("usage", error.message, hint: "usage: \(error.usage)")
            return exitUsage
        } catch let error as CertificateProviderError {
            let hint = ErrorText.hint(
                for: error,
                command: command,
                provider: Invocation.providerArgument(arguments)
            )
            console.err(ErrorText.render(error, hint: hint))
            fail(error.code.rawValue, error.reason, hint: hint)
            return exitFailure
        } catch let error as EmulatorUnavailable {
            console.err("certsign: error: \(error.message)\n  hint: \(error.hint)")
            fail("emulatorUnavailable", error.message, hint: error.hint)
            return exitUnavailable
        } catch is CancellationError {
            console.err("certsign: cancelled")
            fail("cancelled", "cancelled", hint: nil)
            return exitFailure
        } catch {
            console.err("certsign: \(error.localizedDescription)")
            fail("failure", error.localizedDescription, hint: nil)
            return exitFailure
        }
    }
}

/// What `--json` prints on stdout when a command fails: `{"error": {"code", "reason", "hint"}}`.
struct ErrorDocument: Encodable {
    struct Body: Encodable {
        /// The `CertificateProviderError` code (`wrongPassword`, `notStored`, …), `usage` for a usage error.
        var code: String
        /// What went wrong.
        var reason: String
        /// What to do about it, when there is something to say.
        var hint: String?
        enum CodingKeys: String, CodingKey, CaseIterable { case code, reason, hint }
    }
    var error: Body
    enum CodingKeys: String, CodingKey, CaseIterable { case error }
}
