public import CertificateProviders
import Foundation
import JSON
import RemoteProviderSupport

/// `certsign dss …`: the Foresight Mobile Platform DSS calls of the HHFWDss sample (login,
/// certificates, sign, signs, remove). With `--json` each prints the platform envelope of its call,
/// on success and on failure alike.
extension FMPDSSProvider {
    /// `dss login`, `dss certificates`, `dss sign`, `dss signs`, `dss remove`.
    public static var commands: [ProviderCommand] {
        [loginCommand, certificatesCommand, signCommand, signsCommand, removeCommand]
    }

    /// The platform envelope as a JSON document (the server's `result` passes through as it came; an
    /// envelope that is not JSON, which the client never builds, prints as `{}`).
    static func envelopeDocument(_ envelope: FMPEnvelope) -> JSONValue {
        (try? JSONValue(parsing: envelope.jsonString)) ?? .object([:])
    }

    /// The provider a `dss` command works with: over the tool's store (the session lives there), with
    /// the TLS settings of the last login (or `tls`) and `parameters`.
    static func commandProvider(
        _ invocation: ProviderCommand.Invocation,
        _ parameters: ProviderParameters = ProviderParameters(),
        tls: FMPLoginTLS? = nil
    ) throws -> FMPDSSProvider {
        let store = try storeDirectory(of: invocation)
        let provider = try FMPDSSProvider(
            parameters: [ParameterKey.storeDirectory: .string(store.path)],
            clientIdentityLookup: invocation.context.clientIdentityLookup,
            warning: invocation.context.warning
        )
        let tlsParameters = try self.tlsParameters(try tls ?? FMPLoginTLS.load(from: store), invocation)
        try provider.setParameters(provider.parameters.merging(tlsParameters).merging(parameters))
        return provider
    }

    /// The tool's store directory, where the session is kept.
    static func storeDirectory(of invocation: ProviderCommand.Invocation) throws -> URL {
        guard let store = invocation.context.storeDirectory else {
            throw CertificateProviderError.invalidParameter("the dss commands keep their session in a store directory")
        }
        return store
    }

    /// The provider parameters for `tls`: the CA file, the client identity's alias and its password
    /// read again from the environment variable or file the login named.
    static func tlsParameters(
        _ tls: FMPLoginTLS,
        _ invocation: ProviderCommand.Invocation
    ) throws -> ProviderParameters {
        var parameters = ProviderParameters()
        if let file = tls.trustedCAFile { parameters[ParameterKey.trustedCAFile] = .string(file) }
        guard let alias = tls.clientIdentity else { return parameters }
        parameters[ParameterKey.clientIdentity] = .string(alias)
        let source: ProviderCommand.SecretSource? =
            if let variable = tls.clientIdentityPasswordEnv {
                .environment(variable: variable)
            } else if let path = tls.clientIdentityPasswordFile {
                .file(path: path)
            } else {
                nil
            }
        if let source {
            parameters[ParameterKey.clientIdentityPassword] =
                .secret(try invocation.secret("client-identity-password", from: source))
        }
        return parameters
    }

    /// Runs a provider call; when it fails after reaching the server, the failure carries the
    /// platform envelope of the call (printed with `--json` before the error).
    static func reportingEnvelope<T>(
        _ provider: FMPDSSProvider,
        _ body: () async throws -> FMPResult<T>
    ) async throws -> FMPResult<T> {
        do {
            return try await body()
        } catch {
            guard let envelope = provider.lastEnvelope else { throw error }
            throw ProviderCommand.Failure(error, document: envelopeDocument(envelope))
        }
    }

    /// Throws the provider's own "not logged in" before a `dss` command asks for a DSS password or
    /// PIN that could not be used anyway.
    /// - Throws: `.authenticationFailed` when the store keeps no FMP session; `.storeCorrupted`.
    static func requireSession(for call: String, _ invocation: ProviderCommand.Invocation) throws {
        let store = try storeDirectory(of: invocation)
        guard try keptSessions(in: store, warning: invocation.context.warning).isEmpty else { return }
        throw CertificateProviderError(
            .authenticationFailed,
            "FMP \(call): fmp-dss: not logged in (certsign dss login)"
        )
    }

    /// A stable per-machine device id: a UUID-shaped SHA-256 of /etc/machine-id (or the host name).
    static var machineDeviceID: String {
        let seed = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8)) ?? ProcessInfo.processInfo.hostName
        let digest = DigestAlgorithm.sha256.hash(
            Array("certsign-device:\(seed.trimmingCharacters(in: .whitespacesAndNewlines))".utf8)
        )
        let hex = HexText.lowercase(digest.prefix(16))
        let parts = [
            hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4),
            hex.dropFirst(20),
        ]
        return parts.map(String.init).joined(separator: "-").uppercased()
    }
}
