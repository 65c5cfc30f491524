import CertificateProviders
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import PKCS12Provider
import RemoteProviderSupport

/// `certsign dss …`: the Foresight Mobile Platform DSS calls of the HHFWDss sample, and
/// `certsign emulator`, the package's own DSS server.
extension Commands {
    static let dssCommands: [CommandDescriptor] = [
        dssLogin, dssCertificates, dssSign, dssSigns, dssRemove, emulator, emulatorWait, emulatorApprove,
        emulatorDecline,
    ]

    /// The platform envelope as an `Encodable` JSON value (the server's `result` passes through as it
    /// came; an envelope that is not JSON, which the client never builds, prints as `{}`).
    static func envelopeJSON(_ envelope: FMPEnvelope) -> JSONValue {
        (try? JSONValue(parsing: envelope.jsonString)) ?? .object([:])
    }
}

extension CommandContext {
    /// A stable per-machine device id: a UUID-shaped SHA-256 of /etc/machine-id (or the host name).
    var machineDeviceID: String {
        let seed = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8)) ?? ProcessInfo.processInfo.hostName
        let digest = DigestAlgorithm.sha256.hash(
            Array("certsign-device:\(seed.trimmingCharacters(in: .whitespacesAndNewlines))".utf8)
        )
        let hex = Format.hex(Array(digest.prefix(16)))
        let parts = [
            hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4),
            hex.dropFirst(20),
        ]
        return parts.map(String.init).joined(separator: "-").uppercased()
    }

    /// The FMP DSS provider over this invocation's store (its session lives there), with `parameters`.
    /// - Parameter tls: the TLS settings to use; nil means those of the last login.
    func fmpProvider(
        _ parameters: ProviderParameters = ProviderParameters(),
        tls: FMPLoginTLS? = nil
    ) throws -> FMPDSSProvider {
        let provider = try FMPDSSProvider(
            parameters: [FMPDSSProvider.ParameterKey.storeDirectory: .string(storeDirectory.path)],
            clientIdentityLookup: clientIdentityLookup,
            warning: warningPrinter
        )
        let tlsParameters = try fmpTLSParameters(try tls ?? loadFMPLoginTLS())
        try provider.setParameters(provider.parameters.merging(tlsParameters).merging(parameters))
        return provider
    }

    /// Prints a library's warning on stderr.
    var warningPrinter: @Sendable (String) -> Void {
        let console = self.console
        return { console.err("certsign: warning: \($0)") }
    }

    /// Keeps the TLS settings of a successful login (removes them when the login used none).
    func saveFMPLoginTLS(_ tls: FMPLoginTLS) throws { try tls.save(in: storeDirectory) }

    /// The TLS settings of the last login; none when there are none.
    func loadFMPLoginTLS() throws -> FMPLoginTLS { try FMPLoginTLS.load(from: storeDirectory) }

    /// The provider parameters for `tls`: the CA file, the client identity's alias and its password
    /// read from the environment variable or file the login named.
    func fmpTLSParameters(_ tls: FMPLoginTLS) throws -> ProviderParameters {
        var parameters = ProviderParameters()
        if let file = tls.trustedCAFile { parameters[FMPDSSProvider.ParameterKey.trustedCAFile] = .string(file) }
        guard let alias = tls.clientIdentity else { return parameters }
        parameters[FMPDSSProvider.ParameterKey.clientIdentity] = .string(alias)
        if let variable = tls.clientIdentityPasswordEnv {
            parameters[FMPDSSProvider.ParameterKey.clientIdentityPassword] =
                .secret(try environmentSecret(variable, option: "--client-identity-password-env"))
        } else if let path = tls.clientIdentityPasswordFile {
            parameters[FMPDSSProvider.ParameterKey.clientIdentityPassword] =
                .secret(try readSecretFile(path, option: "--client-identity-password-file"))
        }
        return parameters
    }

    /// Runs a provider call; on failure with `--json`, prints the platform envelope of the failed
    /// call on stdout before the error goes to stderr.
    func reportingEnvelope<T>(_ provider: FMPDSSProvider, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            if json, let envelope = provider.lastEnvelope {
                console.out(JSONOutput.encode(Commands.envelopeJSON(envelope)))
            }
            throw error
        }
    }
}

extension CommandContext {
    /// Throws the provider's own "not logged in" before a `dss` command asks for a DSS password or
    /// PIN that could not be used anyway.
    /// - Throws: `.authenticationFailed` when the store keeps no FMP session; `.storeCorrupted`.
    func requireFMPSession(for call: String) throws {
        guard try FMPDSSProvider.keptSessions(in: storeDirectory, warning: warningPrinter).isEmpty else { return }
        throw CertificateProviderError(
            .authenticationFailed,
            "FMP \(call): fmp-dss: not logged in (certsign dss login)"
        )
    }
}
