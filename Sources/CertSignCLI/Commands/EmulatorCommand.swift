import CertificateProviders
import DSSEmulator
internal import Durability
import Foundation

/// `certsign emulator`: the package's own DSS server (FMP, CryptoPro DSS and CSC v2 routes, TSA,
/// OCSP and CRL), in memory or with a state kept across restarts.
extension Commands {
    /// `certsign emulator [--host ADDR] [--port N] …`.
    struct EmulatorOptions: CommandOptions {
        var host: String?
        var allowRemote = false
        var port: UInt16?
        var faults = false
        var caOut: String?
        var tls = false
        var requireClientCert: String?
        var state: String?
        var force = false

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
            another CA certificate unless --force.
            """,
        examples: [
            "certsign emulator --port 8443 --tls --ca-out emulator-ca.pem",
            "certsign emulator --state ~/.local/share/certsign-emulator --ca-out emulator-ca.pem",
        ]
    ) { (options: EmulatorOptions, context) in
        var configuration = DSSEmulator.Configuration()
        // A non-loopback --host needs --allow-remote, --require-client-cert needs --tls: checked by
        // EmulatorOptions.validate.
        if let host = options.host { configuration.host = host }
        // Checked against 0…65535 when the command line was parsed.
        if let port = options.port { configuration.port = port }
        configuration.faultsEnabled = options.faults
        configuration.requestLogLimit = 0
        configuration.stateDirectory = options.state
        configuration.issuesRevocationURLs = true
        if let caFile = options.requireClientCert {
            guard let bytes = FileManager.default.contents(atPath: caFile) else {
                throw CertificateProviderError(
                    .fileSystem,
                    "cannot read the client CA file \(caFile) (from --require-client-cert)"
                )
            }
            configuration.tls = .init(
                clientCertificateAuthorities: try Certificate.certificates(derOrPEM: Array(bytes))
            )
        } else if options.tls {
            configuration.tls = .init()
        }
        // Before anything is printed: a SIGTERM sent as soon as "listening" is read must not be lost.
        let termination = SignalWaiter()
        let server = try DSSEmulator(configuration: configuration)
        if let caOut = options.caOut {
            try checkCAOutput(caOut, certificateAuthority: server.seed.certificateAuthority, force: options.force)
        }
        let url = try server.start()
        if let caOut = options.caOut {
            try FileSystem.writeAtomically(caOut, Array(server.certificateAuthorityPEM.utf8))
        }
        context.emit(
            encoding: EmulatorDocument(
                url: url.absoluteString,
                faults: configuration.faultsEnabled,
                tls: configuration.tls != nil
            ),
            human:
                "DSS emulator listening on "
                + "\(url.absoluteString)\(configuration.faultsEnabled ? " (faults enabled)" : "") — Ctrl-C stops "
                + "it"
        )
        await termination.wait()
        server.stop()
        context.console.err("DSS emulator stopped")
        return CertSign.exitSuccess
    }

    /// Refuses `--ca-out FILE` when the file exists and holds anything but `certificateAuthority`
    /// (signatures and clients set up with the old CA would stop verifying), unless `force`.
    static func checkCAOutput(_ path: String, certificateAuthority: Certificate, force: Bool) throws {
        guard !force, FileSystem.exists(path) else { return }
        let held = FileSystem.read(path).flatMap { try? Certificate.certificates(derOrPEM: $0) } ?? []
        if held.count == 1 && held[0] == certificateAuthority { return }
        let what =
            held.first.map { "the CA certificate '\($0.subject)' (SHA-256 \($0.sha256FingerprintHex))" }
            ?? "no certificate this emulator made"
        throw CertificateProviderError(
            .alreadyExists,
            "--ca-out \(path) exists and holds \(what), not this emulator's CA '\(certificateAuthority.subject)' "
                + "(SHA-256 \(certificateAuthority.sha256FingerprintHex)); it is left as it is"
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
