public import CertificateProviders
import Foundation
import HTTPClient
// The provider's public API stands on RemoteProviderSupport (its `remote` state, its initializers,
// the shared parameter keys), so importing the provider alone reaches all of it.
@_exported public import RemoteProviderSupport

/// A CryptoPro DSS server as a `CertificateProvider` (ID ``ProviderID/cryptoProDSS``,
/// `cryptopro-dss`) whose server builds the signatures (`DocumentSigning`).
///
/// Parameters: ``schema`` declares them (key, type, default, secret or not, meaning);
/// `certsign providers --params cryptopro-dss` prints them. The initializers, ``setParameters(_:)`` and
/// ``initialize(options:)`` validate through it, with the same messages.
///
/// Without `certificateID` and `certificate` the user's default certificate is used (or the only one).
///
/// ``initialize(options:)`` logs in, lists the certificates, selects one and returns an identity
/// whose certificate comes from the server and whose key is a `ServerHeldSigningKey` (``ServerHeldSigningKey/cryptoProDSS(certificate:certificateID:)``) (the
/// server signs whole documents; see ``signDocument(_:)``). With `storeDirectory`, the selected
/// certificate and the access token are cached in `cryptopro-dss-session.json` there (mode 0600,
/// replaced atomically under a lock, never the password or PIN): ``storedCertificate()`` then
/// returns the identity without any network call while the token is valid, also in a new process,
/// but only when the cache matches the current parameters (server, user, OAuth client and
/// certificate selection); otherwise ``initialize(options:)`` logs in again and replaces it. A
/// cache file that is not a regular file of this user, or that others can read, is ignored (the
/// `warning` callback says so). A PIN or password in the parameters is always used: a session is
/// bound to the login credentials it was made with (`password`, `clientSecret`; the file keeps a
/// salted PBKDF2 verifier of them, never the values), so other credentials log in afresh and a wrong
/// password fails as it would without a session; a cache written before verifiers were kept serves
/// no credentials. When the server shows that the kept certificate is stale (it re-issued it),
/// ``refreshSelectedCertificate()`` lists the certificates again and selects anew.
///
/// Threat model of the cache: the token is a bearer secret until it expires (typically an hour).
/// Only the same OS user (and root) can read the file; a stolen token cannot sign with a
/// PIN-protected key without the PIN. ``deleteStoredCertificate()`` removes it. The token never
/// appears in a description or an error.
public final class CryptoProDSSProvider: CertificateProvider, DocumentSigning, CertificateListRefreshing {
    /// How documents go up (the `uploadMode` parameter).
    public enum UploadMode: String, Sendable {
        /// The document itself (`Hash: False`).
        case content
        /// Its digest (`Hash: True`), with the digest that fits the certificate's key.
        case hash
        /// The document up to `maxUploadBytes`, its digest above.
        case auto
    }

    /// The default `maxUploadBytes`: 16 MiB.
    public static let defaultMaxUploadBytes = 16 << 20

    /// What a session was made for: it serves only parameters that ask for the same.
    package struct SessionKey: Equatable, Sendable {
        var url: String
        var username: String
        var clientID: String
        /// `id:N`, `name:X` or `default`.
        var selection: String
    }

    /// A logged-in session: its client, the identity it selected and what it was made with.
    public struct Session: Sendable {
        var key: SessionKey
        var identity: SigningIdentity
        var certificateID: Int
        var client: CryptoProDSSClient
        var url: URL
        var username: String
        /// The `pin` of the parameters the session was made with (options of `initialize` included).
        var pin: Secret?
        /// The login credentials the session was made with (or, restored from the cache, that its
        /// verifier matched); nil when none were given.
        var password: Secret?
        var clientSecret: Secret?
        /// The verifier the cache keeps for them (nil without a cache).
        var verifier: SessionCredentialVerifier?
    }

    /// The parameters and the selected session (its identity included), and the base every remote
    /// provider holds: its `parameters` and `setParameters(_:)` answer
    /// from it (`RemoteProvider`).
    public let remote: RemoteProviderState<Session?>

    /// Makes the provider around `remote` (the initializers call it).
    public init(remote: RemoteProviderState<Session?>) { self.remote = remote }

    /// Logs in, lists the certificates, selects one (see the type's documentation) and caches the
    /// session when `storeDirectory` is set.
    /// - Throws: `.invalidParameter` for missing or wrong parameters, or a certificate the user does
    ///   not have (the reason lists the user's certificates); `.authenticationFailed`, `.network`,
    ///   `.timeout`; `.fileSystem` when the cache cannot be written.
    public func initialize(options: ProviderParameters) async throws -> SigningIdentity {
        let merged = try remote.merged(options)
        let configuration = try configuration(from: merged)
        let client = CryptoProDSSClient(
            configuration: configuration,
            transport: try providerTransport(merged, configuration)
        )
        let username = try merged.requiredString(ParameterKey.username)
        let password = try merged.requiredSecret(ParameterKey.password)
        try await client.login(username: username, password: password)
        let cache = try cache(merged)
        let verifier = try cache.map { _ in
            try SessionCredentialVerifier(credentials: CryptoProDSSProvider.loginCredentials(merged))
        }
        let certificates = try await client.certificates()
        let chosen = try CryptoProDSSProvider.select(
            from: certificates,
            id: try merged.integer(ParameterKey.certificateID),
            name: try merged.string(ParameterKey.certificate)
        )
        let identity = SigningIdentity(
            certificate: chosen.certificate,
            chain: [],
            key: ServerHeldSigningKey.cryptoProDSS(certificate: chosen.certificate, certificateID: chosen.id)
        )
        let key = SessionKey(
            url: configuration.baseURL.absoluteString,
            username: username,
            clientID: configuration.clientID,
            selection: try CryptoProDSSProvider.selection(merged)
        )
        let session = Session(
            key: key,
            identity: identity,
            certificateID: chosen.id,
            client: client,
            url: configuration.baseURL,
            username: username,
            pin: try merged.secret(ParameterKey.pin),
            password: password,
            clientSecret: try merged.secret(ParameterKey.clientSecret),
            verifier: verifier
        )
        remote.withLock { $0.kept = session }
        if let cache, let token = await client.currentToken {
            try await cache.save(
                .init(
                    url: key.url,
                    username: username,
                    clientID: key.clientID,
                    certificateID: chosen.id,
                    certificateDER: Data(chosen.certificate.derRepresentation),
                    accessToken: CryptoProDSSProvider.text(of: token.accessToken),
                    expiresAt: token.expiresAt,
                    selection: key.selection,
                    credentials: verifier
                )
            )
        }
        return identity
    }

    /// The selected identity without any network call: the one of this process's last
    /// ``initialize(options:)``, else the cached one in `storeDirectory` when its token is still
    /// valid (30 s margin); either only when it was made for what the current parameters ask
    /// (`url`, `username`, `clientID`, `certificateID` / `certificate`, when given) and, when
    /// `password` or `clientSecret` is given, with those credentials (checked against the cache's
    /// verifier; a cache without one never serves); else nil.
    /// - Throws: `.storeCorrupted` for a cache file that is not ours; `.fileSystem`.
    public func storedCertificate() throws -> SigningIdentity? {
        let (parameters, current) = remote.withLock { ($0.parameters, $0.kept) }
        if let current, CryptoProDSSProvider.serves(current, parameters) { return current.identity }
        guard let cache = try cache(parameters), let entry = try cache.load() else { return nil }
        let token = CryptoProToken(accessToken: Secret(entry.accessToken), expiresAt: entry.expiresAt)
        guard token.isValid(at: base.clock.now, margin: 30), let url = URL(string: entry.url) else { return nil }
        let key = SessionKey(
            url: entry.url,
            username: entry.username,
            clientID: entry.clientID,
            selection: entry.selection ?? "id:\(entry.certificateID)"
        )
        guard CryptoProDSSProvider.matches(key, parameters, cachedCertificateID: entry.certificateID),
            let verifier = entry.credentials
        else { return nil }
        let credentials = CryptoProDSSProvider.loginCredentials(parameters)
        if credentials.contains(where: { $0.value != nil }), !verifier.matches(credentials) { return nil }
        let certificate: Certificate
        do {
            certificate = try Certificate(derEncoded: Array(entry.certificateDER))
        } catch {
            throw CertificateProviderError(
                .storeCorrupted,
                "the CryptoPro DSS cache \(cache.fileURL.path) holds no valid certificate; delete it"
            )
        }
        var merged = parameters
        merged[ParameterKey.url] = .url(url)
        merged[ParameterKey.clientID] = .string(entry.clientID)
        let password = try parameters.secret(ParameterKey.password)
        let restored = try configuration(from: merged)
        let client = CryptoProDSSClient(
            configuration: restored,
            transport: try providerTransport(merged, restored),
            token: token,
            credentials: password.map { (entry.username, $0) }
        )
        let identity = SigningIdentity(
            certificate: certificate,
            chain: [],
            key: ServerHeldSigningKey.cryptoProDSS(certificate: certificate, certificateID: entry.certificateID)
        )
        let session = Session(
            key: key,
            identity: identity,
            certificateID: entry.certificateID,
            client: client,
            url: url,
            username: entry.username,
            pin: try parameters.secret(ParameterKey.pin),
            password: password,
            clientSecret: try parameters.secret(ParameterKey.clientSecret),
            verifier: verifier
        )
        return remote.withLock { value -> SigningIdentity in
            if let existing = value.kept, CryptoProDSSProvider.serves(existing, value.parameters) {
                return existing.identity
            }
            value.kept = session
            return identity
        }
    }

    /// Forgets the session in memory and removes the cache file (no-op when there is none).
    /// - Throws: `.fileSystem` when the cache file cannot be removed.
    public func deleteStoredCertificate() throws {
        let parameters = remote.withLock { value -> ProviderParameters in
            value.kept = nil
            return value.parameters
        }
        try cache(parameters)?.delete()
    }

    /// The server signs a document or its digest (`Hash: True`) with the selected certificate.
    ///
    /// `.cadesBES` → `CAdES` with `CADESType: BES`, `.cms` → `CMS`; `isDetached` → `IsDetached`.
    /// What goes up follows `uploadMode`: `content` sends the document (from a `.content` payload,
    /// or read from the request's `contentFile`), `hash` sends its digest with `Hash: True` (the
    /// digest that fits the certificate's key; always detached), and `auto` (default) sends the
    /// document when it is at most `maxUploadBytes` (16 MiB) and its digest above. For a document
    /// the server chooses the digest that fits the certificate's key (`DigestAlgorithm.preferred(for:)`:
    /// Streebog-256/512 for GOST certificates, SHA-256 otherwise), so only that one is accepted there.
    /// Uses the current session (initializing from the parameters when there is none) and the `pin`
    /// parameter (or the `pin` given to ``initialize(options:)``).
    /// - Throws: `.unsupportedAlgorithm` for another format or digest; `.invalidParameter` for an
    ///   attached signature of a digest, a digest payload without its file in `content` mode, or a
    ///   document over `maxUploadBytes` in `content` mode; as
    ///   ``CryptoProDSSClient/sign(document:certificateID:pin:parameters:)``.
    public func signDocument(_ request: DocumentSigningRequest) async throws -> [UInt8] {
        let upload = try await upload(request)
        let signature = try await signOrConfirm(
            upload.document,
            session: upload.session,
            pin: upload.pin,
            parameters: upload.parameters
        )
        try await refreshCache(upload.session, parameters: parameters)
        return signature
    }

    /// What one signing call sends: the session, the document or its digest, the PIN and the
    /// signature parameters for `request`.
    /// - Throws: `.unsupportedAlgorithm` for a format other than CAdES or CMS; as the upload mode.
    func upload(_ request: DocumentSigningRequest) async throws -> DocumentUpload {
        let type: CryptoProSignatureType
        switch request.format {
        case .cadesBES: type = .cades
        case .cms: type = .cms
        default:
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "CryptoPro DSS: signature format '\(request.format)' is not supported (cades, cms)"
            )
        }
        let parameters = self.parameters
        let mode = CryptoProDSSProvider.uploadMode(parameters)
        let limit = try parameters.integer(ParameterKey.maxUploadBytes) ?? CryptoProDSSProvider.defaultMaxUploadBytes
        let session = try await currentSession()
        let size = try CryptoProDSSProvider.documentSize(request)
        let sendsContent = try CryptoProDSSProvider.sendsContent(mode: mode, size: size, limit: limit)
        let certificate = session.identity.certificate
        let document =
            sendsContent
            ? try CryptoProDSSProvider.content(of: request, certificate: certificate)
            : try CryptoProDSSProvider.digest(of: request, certificate: certificate)
        return DocumentUpload(
            session: session,
            document: document,
            pin: try parameters.secret(ParameterKey.pin) ?? session.pin,
            parameters: CryptoProSignatureParameters(type: type, isDetached: request.isDetached, isHash: !sendsContent)
        )
    }

    /// The user's certificates on the server, through the current session.
    /// - Throws: as ``CryptoProDSSClient/certificates()``.
    public func certificates() async throws -> [CryptoProCertificate] {
        try await currentSession().client.certificates()
    }

    // MARK: Session

    func currentSession() async throws -> Session {
        if let session = remote.kept { return session }
        _ = try await initialize(options: ProviderParameters())
        guard let session = remote.kept else {
            throw CertificateProviderError(
                .authenticationFailed,
                "the CryptoPro DSS provider has no session; call initialize(options:)"
            )
        }
        return session
    }

    /// Writes the client's current token to the cache when it changed (renewed during a call).
    private func refreshCache(_ session: Session, parameters: ProviderParameters) async throws {
        guard let cache = try cache(parameters), let token = await session.client.currentToken else { return }
        let text = CryptoProDSSProvider.text(of: token.accessToken)
        if let entry = try? cache.load(), entry.accessToken == text { return }
        try await cache.save(
            .init(
                url: session.url.absoluteString,
                username: session.username,
                clientID: session.client.configuration.clientID,
                certificateID: session.certificateID,
                certificateDER: Data(session.identity.certificate.derRepresentation),
                accessToken: text,
                expiresAt: token.expiresAt,
                selection: session.key.selection,
                credentials: session.verifier
            ),
            replacingOnlyOlder: true
        )
    }

    // MARK: Parameters

    /// The app's transport, or a CurlTransport made now with the TLS parameters.
    private func providerTransport(
        _ parameters: ProviderParameters,
        _ configuration: CryptoProDSSClient.Configuration
    ) throws -> any HTTPTransport {
        try base.transport(for: parameters, endpointPolicy: configuration.endpointPolicy)
    }

    private func configuration(from parameters: ProviderParameters) throws -> CryptoProDSSClient.Configuration {
        let (url, policy) = try base.endpoint(
            [ParameterKey.url],
            in: parameters,
            missing: "parameter 'url' is required"
        )
        var configuration = CryptoProDSSClient.Configuration(
            baseURL: url,
            clientSecret: try parameters.secret(ParameterKey.clientSecret),
            timeout: try RemoteProviderParameters.timeout(parameters),
            endpointPolicy: policy,
            clock: base.clock
        ).withAdditionalHeaders(base.additionalHeaders)
        if let clientID = try parameters.string(ParameterKey.clientID) { configuration.clientID = clientID }
        return configuration
    }

    func cache(_ parameters: ProviderParameters) throws -> CryptoProSessionCache? {
        guard let directory = try base.storeDirectory(parameters) else { return nil }
        return CryptoProSessionCache(directory: directory, warning: base.warning)
    }

    static func text(of secret: Secret) -> String {
        secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}

extension CryptoProDSSProvider: RemoteProvider {
    /// No session yet.
    public static var initialKept: Session? { nil }

    /// Drops a session made for another server, user, client or certificate (the next use logs in
    /// with the new parameters).
    public static func parametersChanged(_ value: inout RemoteProviderState<Session?>.Value) {
        if let session = value.kept, !serves(session, value.parameters) { value.kept = nil }
    }
}
