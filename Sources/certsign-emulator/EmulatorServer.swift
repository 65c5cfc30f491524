import CertSignCLI
import CertificateProviders
internal import Durability
import EmulatorKit
import Foundation

/// Runs the emulator until SIGINT or SIGTERM, as `certsign emulator` did in process: the
/// configuration from the command line, the ready line once it listens (with `--ca-out`, after the
/// CA file is written; with `--ready-file`, the URL in that file too), `DSS emulator stopped` on
/// standard error at the end.
enum EmulatorServer {
    /// Runs the emulator the command line describes; returns the exit code.
    static func run(_ invocation: EmulatorInvocation) async throws -> Int32 {
        let options = invocation.options
        let configuration = try configuration(options)
        // Before anything is printed: a SIGTERM sent as soon as "listening" is read must not be lost.
        let termination = SignalWaiter()
        ParentWatch.start()
        // A file left by an emulator that was killed must not read as this one being ready.
        if let readyFile = options.readyFile { try? FileManager.default.removeItem(atPath: readyFile) }
        let server = try DSSEmulator(configuration: configuration)
        if let caOut = options.caOut {
            try checkCAOutput(caOut, certificateAuthority: server.seed.certificateAuthority, force: options.force)
        }
        let url = try server.start()
        if let caOut = options.caOut {
            try FileSystem.writeAtomically(caOut, Array(server.certificateAuthorityPEM.utf8))
        }
        invocation.announce(url: url, faults: configuration.faultsEnabled, tls: configuration.tls != nil)
        if let readyFile = options.readyFile {
            try FileSystem.writeAtomically(readyFile, EmulatorReadiness.contents(url: url))
        }
        await termination.wait()
        if let readyFile = options.readyFile { try? FileManager.default.removeItem(atPath: readyFile) }
        server.stop()
        invocation.note("DSS emulator stopped")
        return CertSign.exitSuccess
    }

    /// The emulator's configuration for `options` (a non-loopback --host needs --allow-remote,
    /// --require-client-cert needs --tls: checked by EmulatorOptions.validate).
    static func configuration(_ options: EmulatorOptions) throws -> DSSEmulator.Configuration {
        var configuration = DSSEmulator.Configuration()
        if let host = options.host { configuration.host = host }
        // Checked against 0…65535 when the command line was parsed.
        if let port = options.port { configuration.port = port }
        configuration.faultsEnabled = options.faults
        configuration.requestLogLimit = 0
        configuration.stateDirectory = options.state
        configuration.issuesRevocationURLs = true
        configuration.autoApproveAfter = options.autoApproveSeconds.map(TimeInterval.init)
        configuration.authorizationApprovalValidity = options.authorizationApprovalSeconds.map(TimeInterval.init)
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
        return configuration
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
}
