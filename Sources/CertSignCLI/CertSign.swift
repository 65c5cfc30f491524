internal import COpenSSLShims
import CertificateProviders
public import Foundation
import PKCS11Provider

/// The `certsign` command-line tool as a library: `main.swift` calls ``CertSign/main(arguments:environment:)``
/// and exits with its result, and tests call it in-process or run the built binary.
///
/// Exit codes: 0 success, 1 the operation failed (wrong password, invalid signature, the server said
/// no), 64 usage error (unknown command or flag, missing argument).
public enum CertSign {
    /// The tool's version.
    public static let version = "0.1.0"

    /// Exit code for success.
    public static let exitSuccess: Int32 = 0
    /// Exit code for a failed operation.
    public static let exitFailure: Int32 = 1
    /// Exit code for a usage error (BSD `EX_USAGE`).
    public static let exitUsage: Int32 = 64

    /// Keeps the process's memory (passwords, PINs, unlocked keys) out of core dumps and away from
    /// other processes of the same user: core file size 0 and not dumpable (which also refuses
    /// `ptrace` attachment and `/proc/<pid>/mem` to non-root users). `certsign`'s `main` calls this
    /// first; it holds until the process exits.
    /// - Returns: whether both settings took effect.
    @discardableResult
    public static func disableCoreDumps() -> Bool {
        COpenSSLShims_disableCoreDumps() == 0
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
        let console = Console(environment: environment)
        do {
            let invocation = try Invocation.parse(arguments)
            let context = try CommandContext(
                console: console,
                json: invocation.json,
                storeOverride: invocation.store,
                environment: environment
            )
            return try await invocation.run(context)
        } catch let error as UsageError {
            console.err("certsign: \(error.message)")
            console.err("usage: \(error.usage)")
            return exitUsage
        } catch let error as CertificateProviderError {
            console.err(ErrorText.render(error))
            return exitFailure
        } catch is CancellationError {
            console.err("certsign: cancelled")
            return exitFailure
        } catch {
            console.err("certsign: \(error.localizedDescription)")
            return exitFailure
        }
    }
}

/// One- or two-line error messages: what went wrong and what to do.
enum ErrorText {
    static func render(_ error: CertificateProviderError) -> String {
        var text = "certsign: error: \(error.reason)"
        // GOST and CryptoPro errors already say what to install or how to convert.
        let saysWhatToDo = error.reason.hasPrefix("GOST needs ") || error.reason.contains("CryptoPro CSP")
        if !saysWhatToDo, let hint = hint(for: error.code) { text += "\n  hint: \(hint)" }
        return text
    }

    static func hint(for code: CertificateProviderError.Code) -> String? {
        switch code {
        case .wrongPassword:
            return
                "check the password (it is case-sensitive; PKCS#12 passwords from Windows may differ from the login password)"
        case .passwordRequired: return "give it with --password-env VAR, --password-file PATH or --password-stdin"
        case .malformedInput: return "the file is damaged or of another kind; check that it is the file you meant"
        case .unsupportedAlgorithm:
            return "re-export the file or key with a modern algorithm (openssl pkcs12 -export without -legacy)"
        case .providerNotFound: return "run 'certsign providers' to see the registered providers"
        case .notStored: return "run 'certsign identity list' to see what is stored"
        case .alreadyExists: return "choose another --alias or delete the existing one first"
        case .authenticationFailed: return "log in again ('certsign dss login …') and check the user name and password"
        case .network, .timeout: return "check that the server is reachable and try again"
        case .storeCorrupted: return "move the damaged file aside; certsign never overwrites it"
        case .pinLocked:
            return
                "unlock the PIN with the SO PIN (pkcs11-tool --login --login-type so --init-pin) or the token's own tool"
        case .tokenNotFound, .certificateNotFound:
            return "run 'certsign tokens --module PATH' to see the tokens and the pkcs11: URI of each key"
        case .moduleNotLoadable:
            return
                "give --param module=PATH of a PKCS#11 module (e.g. /usr/lib/softhsm/libsofthsm2.so, opensc-pkcs11.so)"
        default: return nil
        }
    }
}
