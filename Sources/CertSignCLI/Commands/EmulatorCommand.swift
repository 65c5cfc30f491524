import CertificateProviders
internal import Durability
import Foundation

/// `certsign emulator`: the package's own DSS server (FMP, CryptoPro DSS and CSC v2 routes, TSA,
/// OCSP and CRL), in memory or with a state kept across restarts. The server is the
/// `certsign-emulator` program (EmulatorKit); `certsign` parses and checks the command line, then
/// runs the `certsign-emulator` installed beside it, so it never links the emulator.
extension Commands {
    static let emulator = CommandDescriptor(
        words: ["emulator"],
        summary: "run the DSS emulator (FMP, CryptoPro DSS and CSC v2 routes) until Ctrl-C",
        discussion: """
            A local DSS server with real crypto, seeded with the HHFWDss sample's data: user Leonid / 123123,
            environment Leonid_environment, project Leonid_project, DSS password Saprun123, certificate
            12831 with PIN 123; the first signature id is 121. Its signer and TSA certificates name its
            own OCSP responder and CRL (<URL>ocsp, <URL>crl), so 'certsign verify --check-revocation'
            checks them. Without --state every run has a fresh CA and keys. With --state DIR the CA,
            keys, users and stored signatures are kept (DIR 0700, files 0600, written atomically; a
            damaged state is an error, never replaced); without --port the last run's port is taken
            again when it is free, and when the URL changes the keys get new certificates naming it
            (earlier ones stay known to the OCSP responder). --ca-out never replaces a file holding
            another CA certificate unless --force. A script that starts it in the background waits for
            it with --ready-file FILE and 'certsign emulator wait FILE' (no sleep).
            """,
        examples: [
            "certsign emulator --port 8443 --tls --ca-out emulator-ca.pem",
            "certsign emulator --state ~/.local/share/certsign-emulator --ca-out emulator-ca.pem",
            "certsign emulator --ca-out emulator-ca.pem --ready-file emulator.url & certsign emulator wait emulator.url",
        ]
    ) { (options: EmulatorOptions, context) in
        if let runner = context.emulatorRunner {
            return try await runner(EmulatorInvocation(options: options, context: context))
        }
        // certsign itself: the certsign-emulator beside it, with this command line less the word
        // `emulator` (standard input, output and error shared, SIGINT and SIGTERM passed on).
        let executable = try EmulatorExecutable.locate(environment: context.environment)
        return try await executable.run(
            arguments: context.argumentsWithoutCommandWords,
            environment: context.environment
        )
    }

    /// Whether `host` is an IP literal of the loopback interface (`127.0.0.0/8`, `::1`).
    static func isLoopbackAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return (UInt32(bigEndian: v4.s_addr) >> 24) == 127 }
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
        }
        return false
    }
}

/// `certsign emulator [--host ADDR] [--port N] …` (the options of `certsign-emulator` as well).
package struct EmulatorOptions: CommandOptions {
    package var host: String?
    package var allowRemote = false
    package var port: UInt16?
    package var faults = false
    package var caOut: String?
    package var tls = false
    package var requireClientCert: String?
    package var state: String?
    package var force = false
    package var readyFile: String?
    package var autoApproveSeconds: Int?
    package var authorizationApprovalSeconds: Int?

    static var options: [OptionBinding<Self>] {
        [
            .value(
                \.host,
                "--host",
                "ADDR",
                "address to bind; only loopback addresses unless --allow-remote",
                default: "127.0.0.1"
            ),
            .flag(
                \.allowRemote,
                "--allow-remote",
                "bind a non-loopback address although the emulator serves published test credentials\nand keys "
                    + "(anyone who reaches it can sign as the seed's users)"
            ),
            .integer(
                \.port,
                "--port",
                "N",
                "port to listen on; 0 is any free port (the URL is printed)",
                in: 0...65535,
                default: "0"
            ) { UInt16($0) },
            .flag(
                \.faults,
                "--faults",
                "let requests pick a fault with the X-Emulator-Fault header (for client tests)"
            ),
            .value(
                \.caOut,
                "--ca-out",
                "FILE",
                "write the emulator's CA certificate (PEM) for certsign verify --ca, and for clients\nof --tls (dss "
                    + "login --ca-file FILE)",
                type: .file
            ),
            .flag(
                \.tls,
                "--tls",
                "serve HTTPS with a certificate from the emulator CA naming localhost, 127.0.0.1 and ::1"
            ),
            .value(
                \.requireClientCert,
                "--require-client-cert",
                "CA.pem",
                "with --tls: close every connection without a client certificate issued by a CA in CA.pem\n(TLS "
                    + "alert certificate_required / unknown_ca)",
                type: .file
            ),
            .value(
                \.state,
                "--state",
                "DIR",
                "keep the CA, keys, users and stored signatures in DIR across restarts (default: a fresh\nstate "
                    + "each run)",
                type: .directory
            ),
            .flag(\.force, "--force", "let --ca-out replace a file that holds another CA certificate"),
            .value(
                \.readyFile,
                "--ready-file",
                "FILE",
                "once listening (and --ca-out written), write the URL to FILE atomically; removed when it\n"
                    + "stops ('certsign emulator wait FILE' waits for it)",
                type: .file
            ),
            .integer(
                \.autoApproveSeconds,
                "--auto-approve",
                "SECONDS",
                "approve each signing operation that waits for a person (CSC operationMode A, CryptoPro\n"
                    + "transactions) by itself after SECONDS (default: each waits for 'certsign emulator\n"
                    + "approve ID' until it expires)",
                in: 0...86_400
            ) { $0 },
            .integer(
                \.authorizationApprovalSeconds,
                "--authorization-approval",
                "SECONDS",
                "CSC credentials in implicit mode: credentials/authorize answers a handle and waits up to\n"
                    + "SECONDS for 'certsign emulator approve HANDLE'; credentials/authorizeCheck gives the SAD\n"
                    + "(default: the SAD at once)",
                in: 1...86_400
            ) { $0 },
        ]
    }

    func validate() throws {
        if let host, !Commands.isLoopbackAddress(host), !allowRemote {
            throw InvalidValue(
                message: "--host \(host) is not a loopback address; the emulator serves published credentials, "
                    + "so binding it elsewhere needs --allow-remote"
            )
        }
        if requireClientCert != nil && !tls {
            throw InvalidValue(message: "--require-client-cert needs --tls")
        }
        if force && caOut == nil {
            throw InvalidValue(message: "--force goes with --ca-out FILE")
        }
    }
}

/// Runs the emulator in this process: `certsign-emulator` passes one to ``CertSign/emulatorMain(arguments:environment:runner:)``.
package typealias EmulatorRunner = @Sendable (EmulatorInvocation) async throws -> Int32

/// What `certsign-emulator`'s runner gets from the command line: the checked options and the way
/// `certsign emulator` prints (the ready line, human or `--json`; notes on standard error).
package struct EmulatorInvocation: Sendable {
    /// The options, checked by ``EmulatorOptions/validate()``.
    package let options: EmulatorOptions
    let context: CommandContext

    /// Prints the ready line: `DSS emulator listening on URL …`, or with `--json` the document
    /// `{"url", "faults", "tls"}` (what `certsign demo` reads).
    package func announce(url: URL, faults: Bool, tls: Bool) {
        context.emit(
            encoding: EmulatorDocument(url: url.absoluteString, faults: faults, tls: tls),
            human:
                "DSS emulator listening on \(url.absoluteString)\(faults ? " (faults enabled)" : "") — Ctrl-C stops it"
        )
    }

    /// Prints `text` on standard error.
    package func note(_ text: String) { context.console.err(text) }
}
