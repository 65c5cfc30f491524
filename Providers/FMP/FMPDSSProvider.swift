public import CertificateProviders
import Foundation
import HTTPClient
public import JSON
// The provider's public API stands on RemoteProviderSupport (its `remote` state, its initializers,
// the shared parameter keys), so importing the provider alone reaches all of it.
@_exported public import RemoteProviderSupport

/// The Foresight Mobile Platform DSS as a `CertificateProvider` (ID ``ProviderID/fmpDSS``)
/// with the platform's signature history (`SignatureHistoryProviding`), and the one FMP path the
/// `certsign dss` commands use.
///
/// Parameters: ``schema`` declares them (key, type, default, secret or not, meaning);
/// `certsign providers --params fmp-dss` prints them. The initializers, ``setParameters(_:)`` and
/// ``initialize(options:)`` validate through it, with the same messages.
///
/// Sessions: ``login()`` authenticates and keeps the session; with `storeDirectory` it is kept in
/// `fmp-session.json` there (0600, never a password), so later calls (also in other processes)
/// resume it. Every call through a kept session runs under the session file's lock and saves a
/// renewed token pair by compare-and-swap, so two processes never overwrite a newer session with
/// an older one nor spend the single-use refresh token twice. A session is used only when it
/// matches what the parameters ask for (`host`, `apiVersion`, `environment`, `project`,
/// `device`, `username`, when given); a session file that is foreign-owned or readable by others is
/// ignored with a warning (the `warning` callback).
///
/// ``initialize(options:)`` logs in (with `password`; else it resumes a matching kept session),
/// lists the certificates and returns an identity whose certificate comes from the server and whose
/// key is a `ServerHeldSigningKey` (``ServerHeldSigningKey/fmpDSS(certificate:certificateID:)``):
/// the platform signs its own resources (``sign(resource:table:params:column:hhiveID:)``), not
/// arbitrary data. ``storedCertificate()`` returns that identity (also from the session file)
/// while it matches the parameters, until ``deleteStoredCertificate()``.
public final class FMPDSSProvider: CertificateProvider, SignatureHistoryProviding {
    /// What the provider keeps besides its parameters and identity.
    public struct Kept: Sendable {
        /// The session of this process when there is no `storeDirectory`.
        var session: FMPSessionStore.Stored?
        var lastEnvelope: FMPEnvelope?
    }

    /// The parameters, the selected identity and the session, and the base every remote provider
    /// holds: its `parameters` and `setParameters(_:)` answer
    /// from it (`RemoteProvider`).
    public let remote: RemoteProviderState<Kept>

    /// Makes the provider around `remote` (the initializers call it).
    public init(remote: RemoteProviderState<Kept>) { self.remote = remote }

    /// The platform envelope of the last call that reached the server (success or error), for
    /// callers that show it (`certsign --json dss …`).
    package var lastEnvelope: FMPEnvelope? { remote.kept.lastEnvelope }

    // MARK: SAP contract

    /// Logs in (or resumes a matching kept session), lists the certificates and returns the chosen
    /// one as an identity (see the type's documentation); keeps the session and the selection.
    /// - Throws: `.invalidParameter` for missing or wrong parameters or a certificate id the user
    ///   does not have; `.passwordRequired` without `password` and without a matching session;
    ///   `.authenticationFailed`, `.wrongPassword` (DSS password), `.network`, `.timeout`.
    public func initialize(options: ProviderParameters) async throws -> SigningIdentity {
        let merged = try remote.merged(options)
        if try merged.secret(ParameterKey.password) != nil {
            _ = try await login(merged)
        }
        let dssPassword = try merged.requiredSecret(ParameterKey.dssPassword)
        let wanted = try merged.integer(ParameterKey.certificateID)
        let identity = try await withSession("initialize", merged) { client, stored in
            let certificates = try await client.certificates(dssPassword: dssPassword).value
            let chosen = try FMPDSSProvider.choose(from: certificates, id: wanted)
            stored.certificateID = chosen.id
            stored.certificateDER = Data(chosen.certificate.derRepresentation)
            return SigningIdentity(
                certificate: chosen.certificate,
                chain: [],
                key: ServerHeldSigningKey.fmpDSS(certificate: chosen.certificate, certificateID: chosen.id)
            )
        }
        return remote.remember(identity)
    }

    /// The identity ``initialize(options:)`` selected, from memory or from the kept session, when
    /// it matches the current parameters (session and `certificateID`); else nil. No network call.
    /// - Throws: `.storeCorrupted` for a damaged session file.
    public func storedCertificate() throws -> SigningIdentity? {
        let parameters = self.parameters
        let wanted = try parameters.integer(ParameterKey.certificateID)
        let stored: FMPSessionStore.Stored?
        if let store = try sessionStore(parameters) {
            stored = try store.load()
        } else {
            stored = remote.kept.session
        }
        guard let stored, FMPDSSProvider.session(stored.session, matches: parameters),
            let id = stored.certificateID, let der = stored.certificateDER, wanted == nil || wanted == id
        else { return nil }
        if let identity = remote.identity, identity.certificate.derRepresentation == Array(der) {
            return identity
        }
        let certificate: Certificate
        do { certificate = try Certificate(derEncoded: Array(der)) } catch {
            throw CertificateProviderError(
                .storeCorrupted,
                "the saved FMP session holds no valid certificate; log in again ('certsign dss login …')"
            )
        }
        let identity = SigningIdentity(
            certificate: certificate,
            chain: [],
            key: ServerHeldSigningKey.fmpDSS(certificate: certificate, certificateID: id)
        )
        return remote.remember(identity)
    }

    /// Forgets the selected identity and the session (the session file too).
    /// - Throws: `.fileSystem` when the session file cannot be removed.
    public func deleteStoredCertificate() throws {
        let parameters = remote.withLock { value -> ProviderParameters in
            value.identity = nil
            value.kept.session = nil
            return value.parameters
        }
        try sessionStore(parameters)?.delete()
    }

    // MARK: The platform's calls

    /// Authenticates with `username` / `password` and keeps the session (in `storeDirectory` when
    /// set), replacing any earlier one: the sample's `auth`.
    /// - Returns: the session and the platform envelope.
    /// - Throws: `.invalidParameter` for missing parameters; `.authenticationFailed`, `.network`, `.timeout`.
    @discardableResult
    public func login() async throws -> FMPResult<FMPSession> {
        let parameters = self.parameters
        return try await login(parameters)
    }

    /// Lists the user's DSS certificates (`dssPassword`) through the kept session.
    /// - Throws: `.authenticationFailed` when not logged in; as ``FMPClient/certificates(dssPassword:)``.
    public func certificates() async throws -> FMPResult<[FMPCertificate]> {
        let parameters = self.parameters
        let dssPassword = try parameters.requiredSecret(ParameterKey.dssPassword)
        return try await withSession("certificates", parameters) { client, _ in
            try await client.certificates(dssPassword: dssPassword)
        }
    }

    /// Signs a platform resource cell with the `certificateID` certificate (`dssPassword`, `pin`)
    /// through the kept session: the sample's `signCertificate`. Never retried after the server may
    /// have acted.
    /// - Returns: the signature id and the envelope.
    /// - Throws: `.invalidParameter` without `certificateID`; as ``FMPClient/sign(resource:table:params:column:hhiveID:dssPassword:certificateID:certificatePIN:)``.
    public func sign(
        resource: String,
        table: String,
        params: JSONValue = [:],
        column: String,
        hhiveID: Int
    ) async throws -> FMPResult<Int> {
        let parameters = self.parameters
        let dssPassword = try parameters.requiredSecret(ParameterKey.dssPassword)
        guard let certificateID = try parameters.integer(ParameterKey.certificateID) else {
            throw CertificateProviderError.invalidParameter("parameter 'certificateID' is required to sign")
        }
        let pin = try parameters.secret(ParameterKey.pin)
        return try await withSession("sign", parameters) { client, _ in
            try await client.sign(
                resource: resource,
                table: table,
                params: params,
                column: column,
                hhiveID: hhiveID,
                dssPassword: dssPassword,
                certificateID: certificateID,
                certificatePIN: pin
            )
        }
    }

    /// The user's signatures with their envelope: the sample's `signs`.
    /// - Throws: `.authenticationFailed` when not logged in; as ``FMPClient/signs()``.
    public func signs() async throws -> FMPResult<[FMPSignature]> {
        try await withSession("signs", parameters) { client, _ in try await client.signs() }
    }

    /// Removes a signature from the platform's history: the sample's `remove`.
    /// - Throws: `.notStored` when the platform has no such signature; as ``FMPClient/removeSign(id:)``.
    public func removeSign(id: Int) async throws -> FMPResult<Void> {
        try await withSession("remove", parameters) { client, _ in try await client.removeSign(id: id) }
    }

    /// The user's signatures on the platform.
    /// - Throws: `.authenticationFailed` when not logged in; as ``FMPClient/signs()``.
    public func signatures() async throws -> [RemoteSignatureRecord] {
        try await signs().value.map { sign in
            RemoteSignatureRecord(
                id: String(sign.id),
                createdAt: sign.createdAt,
                certificateID: String(sign.certificateID),
                summary: "\(sign.resource) / \(sign.table) / \(sign.column) / row \(sign.hhiveID)",
                signature: sign.signature.isEmpty ? nil : sign.signature
            )
        }
    }

    /// Removes a signature from the platform's history.
    /// - Throws: `.invalidParameter` when `id` is not an integer; `.notStored` when the platform
    ///   has no such signature; as ``FMPClient/removeSign(id:)``.
    public func removeSignature(id: String) async throws {
        guard let number = Int(id) else {
            throw CertificateProviderError.invalidParameter("an FMP signature id is an integer, not '\(id)'")
        }
        _ = try await removeSign(id: number)
    }

    // MARK: Sessions

    private func login(_ parameters: ProviderParameters) async throws -> FMPResult<FMPSession> {
        let configuration = try configuration(from: parameters)
        let client = FMPClient(configuration: configuration, transport: try clientTransport(parameters, configuration))
        let username = try parameters.requiredString(ParameterKey.username)
        let password = try parameters.requiredSecret(ParameterKey.password)
        let result: FMPResult<FMPSession>
        do {
            result = try await client.auth(username: username, password: password)
        } catch {
            let envelope = await client.lastEnvelope
            remote.withLock { $0.kept.lastEnvelope = envelope }
            throw error
        }
        let stored = FMPSessionStore.Stored(
            session: result.value,
            allowsInsecureHTTP: configuration.endpointPolicy.allowsInsecureHTTP
        )
        if let store = try sessionStore(parameters) {
            _ = try await store.withLock { try store.save(stored, replacing: nil) }
        }
        remote.withLock {
            $0.kept.session = stored
            $0.identity = nil
            $0.kept.lastEnvelope = result.envelope
        }
        return result
    }

    /// Runs `body` with a client on the kept session (under the session lock when it is in a
    /// file); saves the session afterwards when the client renewed it, or `body` changed it.
    private func withSession<T: Sendable>(
        _ name: String,
        _ parameters: ProviderParameters,
        _ body: @Sendable (FMPClient, inout FMPSessionStore.Stored) async throws -> T
    ) async throws -> T {
        // Parameters given to init are checked here, through the schema, as setParameters checks them.
        let parameters = try base.validate(parameters)
        let store = try sessionStore(parameters)
        func run() async throws -> T {
            let loaded = try store.map { try $0.load() } ?? self.remote.kept.session
            guard let loaded else {
                throw CertificateProviderError(
                    .authenticationFailed,
                    "FMP \(name): fmp-dss: not logged in (certsign dss login)"
                )
            }
            guard FMPDSSProvider.session(loaded.session, matches: parameters) else {
                throw CertificateProviderError(
                    .authenticationFailed,
                    "FMP \(name): the kept session is for \(loaded.session.username ?? "?") at "
                        + "\(loaded.session.host.absoluteString) "
                        + "\(loaded.session.environment)/\(loaded.session.project), not what the parameters ask for; "
                        + "log in (certsign dss login)"
                )
            }
            let client = try self.client(for: loaded, parameters: parameters)
            var updated = loaded
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body(client, &updated)) } catch { outcome = .failure(error) }
            let envelope = await client.lastEnvelope
            if let session = await client.exportSession() { updated.session = session }
            if updated != loaded {
                if let store { try store.save(updated, replacing: loaded.session) }
                self.remote.withLock { $0.kept.session = updated }
            }
            self.remote.withLock { $0.kept.lastEnvelope = envelope }
            return try outcome.get()
        }
        if let store { return try await store.withLock(run) }
        return try await run()
    }

    private func client(for stored: FMPSessionStore.Stored, parameters: ProviderParameters) throws -> FMPClient {
        let allowsInsecure = try parameters.boolean(ParameterKey.allowInsecureHTTP) ?? stored.allowsInsecureHTTP
        let policy = RemoteEndpointPolicy(allowsInsecureHTTP: allowsInsecure)
        try CertificateProviderError.convertingHTTPErrors { try policy.validate(stored.session.host) }
        let configuration = FMPClient.Configuration(
            session: stored.session,
            timeout: try RemoteProviderParameters.timeout(parameters),
            endpointPolicy: policy
        ).withAdditionalHeaders(base.additionalHeaders)
        return FMPClient(
            session: stored.session,
            configuration: configuration,
            transport: try clientTransport(parameters, configuration)
        )
    }

    /// The app's transport, or a CurlTransport made now with the TLS parameters.
    private func clientTransport(
        _ parameters: ProviderParameters,
        _ configuration: FMPClient.Configuration
    ) throws -> any HTTPTransport {
        try base.transport(for: parameters, endpointPolicy: configuration.endpointPolicy)
    }

    /// Whether a kept session serves `parameters`: each of host, API version, environment,
    /// project, device and user that the parameters give is the session's.
    private static func session(_ session: FMPSession, matches parameters: ProviderParameters) -> Bool {
        do {
            if let host = try parameters.url(ParameterKey.host) ?? parameters.url(ParameterKey.url),
                host != session.host
            {
                return false
            }
            let pairs: [(ProviderParameters.Key, String?)] = [
                (ParameterKey.apiVersion, session.apiVersion), (ParameterKey.environment, session.environment),
                (ParameterKey.project, session.project), (ParameterKey.device, session.device),
                (ParameterKey.username, session.username),
            ]
            for (key, value) in pairs {
                if let wanted = try parameters.string(key), wanted != value { return false }
            }
            return true
        } catch {
            return false
        }
    }

    private static func choose(from certificates: [FMPCertificate], id wanted: Int?) throws -> FMPCertificate {
        let available = certificates.map { String($0.id) }.joined(separator: ", ")
        if let wanted {
            guard let match = certificates.first(where: { $0.id == wanted }) else {
                throw CertificateProviderError.invalidParameter(
                    "certificate \(wanted) is not among the user's DSS certificates "
                        + "(\(available.isEmpty ? "none" : available))"
                )
            }
            return match
        }
        if certificates.count == 1 { return certificates[0] }
        throw CertificateProviderError.invalidParameter(
            certificates.isEmpty
                ? "the user has no DSS certificates"
                : "the user has several DSS certificates (\(available)); set parameter 'certificateID'"
        )
    }

    private func sessionStore(_ parameters: ProviderParameters) throws -> FMPSessionStore? {
        guard let directory = try base.storeDirectory(parameters) else { return nil }
        return FMPSessionStore(directory: directory, warning: base.warning)
    }

    // MARK: Parameters

    private func configuration(from parameters: ProviderParameters) throws -> FMPClient.Configuration {
        let (url, policy) = try base.endpoint(
            [ParameterKey.host, ParameterKey.url],
            in: parameters,
            missing: "parameter 'host' (the platform URL) is required to log in"
        )
        return FMPClient.Configuration(
            apiVersion: try parameters.string(ParameterKey.apiVersion) ?? "v1",
            host: url,
            environment: try parameters.requiredString(ParameterKey.environment),
            project: try parameters.requiredString(ParameterKey.project),
            device: try parameters.string(ParameterKey.device) ?? ProcessInfo.processInfo.hostName,
            timeout: try RemoteProviderParameters.timeout(parameters),
            endpointPolicy: policy
        ).withAdditionalHeaders(base.additionalHeaders)
    }
}

extension FMPDSSProvider: RemoteProvider {
    /// No session and no envelope yet.
    public static var initialKept: Kept { Kept() }

    /// Keeps the identity: ``storedCertificate()`` serves it only while it matches the parameters.
    public static func parametersChanged(_ value: inout RemoteProviderState<Kept>.Value) {}
}
