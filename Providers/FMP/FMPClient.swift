public import CertificateProviders
public import Foundation
public import HTTPClient
public import JSON
import RemoteProviderSupport

/// A client for the Foresight Mobile Platform's DSS API whose calls mirror the HHFWDss sample one to
/// one (`initWithCredentials`, `auth`, `getCertificatesWithPassword`, `signCertificate`, `signs`,
/// `remove`).
///
/// Every call returns a typed value and the platform ``FMPEnvelope``; failures throw
/// `CertificateProviderError`:
/// - `.authenticationFailed`: not logged in, wrong login, or still 401 after one token refresh and
///   one re-authentication;
/// - `.wrongPassword`: the server refused the DSS password or the certificate PIN (403);
/// - `.notStored`: ``removeSign(id:)`` of a signature the server does not have (404);
/// - `.serverRejected`: any other 4xx, with the server's error code and description;
/// - `.network`: connection failures, 5xx, and answers that are not the protocol (wrong JSON
///   shape, naming the field); `.timeout` after ``Configuration/timeout``; `.cancelled`.
///
/// Authorized calls send `Authorization: Bearer <token>` and `X-Device-Id`. On 401 the client
/// refreshes the token once, retries, then logs in again once with the credentials given to
/// ``auth(username:password:)`` (kept in memory only), retries, and then fails.
///
/// Retries: `GET` (``signs()``) follows ``Configuration/retryPolicy`` on network failures. A sign
/// request is never resent after a failure where the server may have acted (timeout, dropped
/// connection, 5xx, unreadable answer); it is resent only after a 401, which the server sends
/// before doing anything.
public actor FMPClient {
    /// Where and how to reach the platform (the sample's `initWithCredentials`); every field documents its default.
    public struct Configuration: Sendable {
        /// The API version (default `v1`).
        public var apiVersion: String
        /// The platform URL (`https://fmp.example.com/`).
        public var host: URL
        /// The environment.
        public var environment: String
        /// The project.
        public var project: String
        /// The device id, sent at login and as `X-Device-Id`.
        public var device: String
        /// The route table (default ``FMPRoutes/standard``).
        public var routes: FMPRoutes
        /// Seconds a call may take, per HTTP exchange (default 30).
        public var timeout: TimeInterval
        /// Retries for safe methods (default ``RetryPolicy/default``; POSTs are never retried).
        public var retryPolicy: RetryPolicy
        /// Which URLs are allowed (default: HTTPS, or HTTP to loopback only).
        public var endpointPolicy: RemoteEndpointPolicy
        /// Extra headers sent with every request (default none): tests send the emulator's fault header
        /// (``withAdditionalHeaders(_:)``).
        package var additionalHeaders: [(name: String, value: String)] = []

        /// Creates a configuration.
        public init(
            apiVersion: String = "v1",
            host: URL,
            environment: String,
            project: String,
            device: String,
            routes: FMPRoutes = .standard,
            timeout: TimeInterval = 30,
            retryPolicy: RetryPolicy = .default,
            endpointPolicy: RemoteEndpointPolicy = .default
        ) {
            self.apiVersion = apiVersion
            self.host = host
            self.environment = environment
            self.project = project
            self.device = device
            self.routes = routes
            self.timeout = timeout
            self.retryPolicy = retryPolicy
            self.endpointPolicy = endpointPolicy
        }

        /// The configuration a saved session points at (host, API version, environment, project,
        /// device), with the other fields given here.
        public init(
            session: FMPSession,
            routes: FMPRoutes = .standard,
            timeout: TimeInterval = 30,
            retryPolicy: RetryPolicy = .default,
            endpointPolicy: RemoteEndpointPolicy = .default
        ) {
            self.init(
                apiVersion: session.apiVersion,
                host: session.host,
                environment: session.environment,
                project: session.project,
                device: session.device,
                routes: routes,
                timeout: timeout,
                retryPolicy: retryPolicy,
                endpointPolicy: endpointPolicy
            )
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    private let transport: any HTTPTransport
    private var tokens: (access: String, refresh: String)?
    private var username: String?
    private var password: Secret?
    private var renewal: Task<Bool, any Error>?
    /// The checked URL of each route without an id, made once: the configuration never changes,
    /// and making one (percent-encoding, Foundation URL parsing) cost more than the round trip's
    /// transport work.
    private var routeURLs: [String: URL] = [:]
    /// The envelope of the last call that reached the server (success or error), for `--json` output.
    package private(set) var lastEnvelope: FMPEnvelope?

    /// Creates a client (the sample's `initWithCredentials`). No request is made.
    /// - Parameters:
    ///   - configuration: where the platform is.
    ///   - transport: the networking; nil uses ``CurlTransport`` with the configuration's
    ///     endpoint policy.
    public init(configuration: Configuration, transport: (any HTTPTransport)? = nil) {
        self.configuration = configuration
        self.transport = SecretRedactingTransport(
            transport ?? CurlTransport(endpointPolicy: configuration.endpointPolicy)
        )
    }

    /// Creates a client that resumes a saved session (no request is made). Re-authentication is not
    /// possible until ``auth(username:password:)`` is called, so an expired refresh token ends in
    /// `.authenticationFailed`.
    /// - Parameters:
    ///   - session: the saved session.
    ///   - configuration: overrides for the session's configuration (routes, timeout, …); it must
    ///     point at the session's host, environment, project and device; nil takes the defaults.
    ///   - transport: the networking; nil makes a ``CurlTransport`` with the configuration's endpoint
    ///     policy (system trust store, no client certificate).
    public init(session: FMPSession, configuration: Configuration? = nil, transport: (any HTTPTransport)? = nil) {
        let configuration = configuration ?? Configuration(session: session)
        self.configuration = configuration
        self.transport = SecretRedactingTransport(
            transport ?? CurlTransport(endpointPolicy: configuration.endpointPolicy),
            secrets: [Secret(session.token), Secret(session.refreshToken)]
        )
        self.tokens = (session.token, session.refreshToken)
        self.username = session.username
    }

    // MARK: Session

    /// Whether the client holds a token pair.
    public var isAuthenticated: Bool { tokens != nil }

    /// The current session (host, environment, project, device, tokens), or nil before login.
    public func exportSession() -> FMPSession? {
        guard let tokens else { return nil }
        return FMPSession(
            host: configuration.host,
            apiVersion: configuration.apiVersion,
            environment: configuration.environment,
            project: configuration.project,
            device: configuration.device,
            username: username,
            token: tokens.access,
            refreshToken: tokens.refresh
        )
    }

    /// Adopts a saved session's tokens.
    /// - Throws: `.invalidParameter` when the session is for another host, API version,
    ///   environment, project or device than this client's configuration.
    public func importSession(_ session: FMPSession) throws {
        guard session.host == configuration.host, session.apiVersion == configuration.apiVersion,
            session.environment == configuration.environment, session.project == configuration.project,
            session.device == configuration.device
        else {
            throw CertificateProviderError.invalidParameter(
                "the saved session is for \(session.host.absoluteString) \(session.environment)/\(session.project), "
                    + "not this client's configuration"
            )
        }
        tokens = (session.token, session.refreshToken)
        username = session.username
    }

    /// Forgets the tokens and the credentials kept for re-authentication.
    public func logout() {
        tokens = nil
        password = nil
    }

    // MARK: Calls

    /// Logs in (the sample's `auth`): `POST /api/{v}/auth/jwt/obtain/` with a form body.
    ///
    /// The credentials are kept in memory to log in again when a refresh fails. The envelope's
    /// `raw` has the token values replaced by `"<redacted>"`.
    /// - Returns: the new session (persist it with `Codable`).
    /// - Throws: `.authenticationFailed` for a wrong login; see the type's error list.
    public func auth(username: String, password: Secret) async throws -> FMPResult<FMPSession> {
        let envelope = try await obtainTokens(username: username, password: password)
        self.username = username
        self.password = password
        guard let session = exportSession() else {
            throw CertificateProviderError(.authenticationFailed, "FMP auth: no token was kept")
        }
        return FMPResult(value: session, envelope: envelope)
    }

    /// Renews the token pair now: `POST /api/{v}/auth/jwt/refresh/`.
    /// - Throws: `.authenticationFailed` when not logged in or the refresh token is refused.
    public func refreshSession() async throws {
        guard let current = tokens?.access else { throw notLoggedIn("refresh") }
        guard try await renew(after: current, reauthenticate: false) else {
            throw CertificateProviderError(
                .authenticationFailed,
                "FMP refresh: the refresh token was refused; log in again"
            )
        }
    }

    /// Lists the user's DSS certificates (the sample's `getCertificatesWithPassword`).
    /// - Throws: `.wrongPassword` when the DSS password is wrong; see the type's error list.
    public func certificates(dssPassword: Secret) async throws -> FMPResult<[FMPCertificate]> {
        let password = SecretSlot(dssPassword)
        let body: JSONValue = ["password": .string(password.placeholder)]
        let (envelope, raw) = try await call(
            "certificates",
            method: .post,
            template: configuration.routes.certificates,
            json: body,
            secrets: [password]
        )
        let list = try FMPClient.decodeCertificates(raw)
        return FMPResult(value: list, envelope: envelope)
    }

    /// Signs a platform resource cell (the sample's `signCertificate`): `POST …/sign/`.
    ///
    /// Sent once: never retried after a timeout, a dropped connection or a 5xx (the server may have
    /// signed); resent only after a 401 and a token renewal.
    /// - Parameters:
    ///   - resource: the resource (`GetBudgetPlanning`).
    ///   - table: the table (`ПланированиеБюджета`).
    ///   - params: the resource parameters, a JSON object (default `{}`).
    ///   - column: the column (`Номер`).
    ///   - hhiveID: the row (`1`).
    ///   - dssPassword: the DSS password.
    ///   - certificateID: the certificate to sign with (`12831`).
    ///   - certificatePIN: the certificate's PIN, nil for a certificate without one.
    /// - Returns: the signature id (`121`).
    /// - Throws: `.wrongPassword` (DSS password or PIN), `.serverRejected` (unknown certificate or
    ///   cell), `.invalidParameter` when `params` is not an object; see the type's error list.
    public func sign(
        resource: String,
        table: String,
        params: JSONValue = [:],
        column: String,
        hhiveID: Int,
        dssPassword: Secret,
        certificateID: Int,
        certificatePIN: Secret?
    ) async throws -> FMPResult<Int> {
        guard params.objectValue != nil else {
            throw CertificateProviderError.invalidParameter(
                "FMP sign: params must be a JSON object, not \(params.typeName)"
            )
        }
        var secrets = [SecretSlot(dssPassword)]
        var body: [String: JSONValue] = [
            "resource": .string(resource), "table": .string(table), "params": params, "column": .string(column),
            "hhive_id": .integer(hhiveID), "password": .string(secrets[0].placeholder),
            "certificate_id": .integer(certificateID),
        ]
        if let certificatePIN {
            secrets.append(SecretSlot(certificatePIN))
            body["certificate_pin"] = .string(secrets[1].placeholder)
        }
        let (envelope, raw) = try await call(
            "sign",
            method: .post,
            template: configuration.routes.sign,
            json: .object(body),
            secrets: secrets
        )
        let id = try FMPClient.decodeSignResult(raw)
        return FMPResult(value: id, envelope: envelope)
    }

    /// Lists the user's signatures (the sample's `signs`): `GET …/signs/`.
    public func signs() async throws -> FMPResult<[FMPSignature]> {
        let (envelope, raw) = try await call("signs", method: .get, template: configuration.routes.signs, json: nil)
        let list = try FMPClient.decodeSigns(raw)
        return FMPResult(value: list, envelope: envelope)
    }

    /// Removes a signature (the sample's `remove`): `DELETE …/signs/{id}/`. Not retried.
    /// - Throws: `.notStored` when the server has no such signature for this user.
    public func removeSign(id: Int) async throws -> FMPResult<Void> {
        let (envelope, _) = try await call(
            "remove",
            method: .delete,
            template: configuration.routes.removeSign,
            json: nil,
            id: id
        )
        return FMPResult(value: (), envelope: envelope)
    }

    // MARK: Plumbing

    private func obtainTokens(username: String, password: Secret) async throws -> FMPEnvelope {
        var request = try makeRequest(.post, template: configuration.routes.obtainToken, id: nil)
        let slot = SecretSlot(password)
        request.setFormBody(
            [
                ("environment", configuration.environment), ("project", configuration.project), ("username", username),
                ("password", slot.placeholder), ("device_id", configuration.device),
            ],
            secrets: [slot]
        )
        let response = try await CertificateProviderError.convertingHTTPErrors {
            try await configuration.retryPolicy.send(request, over: transport)
        }
        let raw = try? JSONValue(parsing: response.body)
        var envelope = FMPEnvelope(response: response, raw: raw.map(FMPClient.redactingTokens))
        guard response.isSuccess else {
            lastEnvelope = envelope
            if response.status == 401 || response.status == 403 {
                throw CertificateProviderError(
                    .authenticationFailed,
                    "FMP auth: the platform refused the login for '\(username)'\(FMPClient.detail(envelope))"
                )
            }
            throw failure("auth", response: response, envelope: envelope)
        }
        let reader = try FMPClient.decodeTokens(response, context: "FMP auth")
        tokens = (try reader.string("token"), try reader.string("refresh_token"))
        envelope.result.raw = FMPClient.redactingTokens(.object(reader.members))
        lastEnvelope = envelope
        return envelope
    }

    /// Renews the tokens after `failedToken` got a 401: by refresh, or by logging in again. Concurrent
    /// callers share one renewal; a caller whose token was already replaced just retries.
    /// - Returns: whether a fresh token is available.
    private func renew(after failedToken: String, reauthenticate: Bool) async throws -> Bool {
        if let current = tokens?.access, current != failedToken { return true }
        if let renewal { return try await renewal.value }
        let task = Task { try await self.performRenewal(reauthenticate: reauthenticate) }
        renewal = task
        defer { renewal = nil }
        return try await task.value
    }

    private func performRenewal(reauthenticate: Bool) async throws -> Bool {
        if reauthenticate {
            guard let username, let password else { return false }
            do {
                _ = try await obtainTokens(username: username, password: password)
                return true
            } catch let error as CertificateProviderError where error.code == .authenticationFailed {
                return false
            }
        }
        guard let refresh = tokens?.refresh else { return false }
        var request = try makeRequest(.post, template: configuration.routes.refreshToken, id: nil)
        let slot = SecretSlot(Secret(refresh))
        try request.setJSONBody(["refresh_token": .string(slot.placeholder)], secrets: [slot])
        let response = try await CertificateProviderError.convertingHTTPErrors {
            try await configuration.retryPolicy.send(request, over: transport)
        }
        guard response.isSuccess else {
            if response.status == 401 || response.status == 403 || response.status == 400 { return false }
            throw failure(
                "refresh",
                response: response,
                envelope: FMPEnvelope(response: response, raw: try? JSONValue(parsing: response.body))
            )
        }
        let reader = try FMPClient.decodeTokens(response, context: "FMP refresh")
        tokens = (try reader.string("token"), try reader.string("refresh_token"))
        return true
    }

    /// One authorized call with the 401 → refresh → re-auth ladder; returns the envelope and `raw`.
    /// `secrets` fill placeholders in `json` (the body is then a wiped `secretBody`).
    private func call(
        _ name: String,
        method: HTTPMethod,
        template: String,
        json: JSONValue?,
        id: Int? = nil,
        secrets: [SecretSlot] = []
    ) async throws -> (FMPEnvelope, JSONValue) {
        guard var token = tokens?.access else { throw notLoggedIn(name) }
        var request = try makeRequest(method, template: template, id: id)
        if let json { try request.setJSONBody(json, secrets: secrets) }
        var response = try await sendAuthorized(request, token: token)
        for reauthenticate in [false, true] where response.status == 401 {
            guard try await renew(after: token, reauthenticate: reauthenticate), let fresh = tokens?.access else {
                continue
            }
            token = fresh
            response = try await sendAuthorized(request, token: token)
        }
        let raw: JSONValue? =
            response.isSuccess ? try response.json(context: "FMP \(name)") : try? JSONValue(parsing: response.body)
        let envelope = FMPEnvelope(response: response, raw: raw)
        lastEnvelope = envelope
        guard response.isSuccess, let raw else {
            if response.status == 401 {
                // Without the login's credentials (a session kept on disk keeps none) no new login was tried.
                let reason =
                    username != nil && password != nil
                    ? "the platform refused the session after a token refresh and a new login; log in again"
                    : "the session has expired; log in again"
                throw CertificateProviderError(
                    .authenticationFailed,
                    "FMP \(name): \(reason)\(FMPClient.detail(envelope))"
                )
            }
            if response.status == 404, name == "remove", let id {
                throw CertificateProviderError(
                    .notStored,
                    "FMP remove: the platform has no signature \(id) for this user\(FMPClient.detail(envelope))"
                )
            }
            throw failure(name, response: response, envelope: envelope)
        }
        return (envelope, raw)
    }

    private func sendAuthorized(_ request: HTTPRequest, token: String) async throws -> HTTPResponse {
        var request = request
        request.setHeader("Authorization", "Bearer \(token)")
        request.setHeader("X-Device-Id", configuration.device)
        return try await CertificateProviderError.convertingHTTPErrors {
            try await configuration.retryPolicy.send(request, over: transport)
        }
    }

    private func makeRequest(_ method: HTTPMethod, template: String, id: Int?) throws -> HTTPRequest {
        let url = try routeURL(template: template, id: id)
        var request = HTTPRequest(method: method, url: url, timeout: configuration.timeout)
        request.setHeader("Accept", "application/json")
        for header in configuration.additionalHeaders { request.setHeader(header.name, header.value) }
        return request
    }

    private func routeURL(template: String, id: Int?) throws -> URL {
        if id == nil, let url = routeURLs[template] { return url }
        guard
            let url = FMPRoutes.url(
                host: configuration.host,
                template: template,
                apiVersion: configuration.apiVersion,
                environment: configuration.environment,
                project: configuration.project,
                id: id
            )
        else {
            throw CertificateProviderError.invalidParameter(
                "the route '\(template)' does not make a URL under \(configuration.host.absoluteString)"
            )
        }
        try CertificateProviderError.convertingHTTPErrors { try configuration.endpointPolicy.validate(url) }
        if id == nil { routeURLs[template] = url }
        return url
    }

    private func failure(_ name: String, response: HTTPResponse, envelope: FMPEnvelope) -> CertificateProviderError {
        let detail = FMPClient.detail(envelope)
        switch response.status {
        case 403 where envelope.errors.contains(where: { $0.code == "wrong_pin" || $0.code == "wrong_dss_password" }):
            return CertificateProviderError(
                .wrongPassword,
                "FMP \(name): the platform refused the password or PIN\(detail)"
            )
        case 400..<500:
            return CertificateProviderError(
                .serverRejected,
                "FMP \(name): the platform refused the request (HTTP \(response.status))\(detail)"
            )
        case 500..<600:
            return CertificateProviderError(
                .network,
                "FMP \(name): the platform failed (HTTP \(response.status))\(detail); try again later"
            )
        default:
            return CertificateProviderError(
                .network,
                "FMP \(name): unexpected HTTP \(response.status) from the platform"
            )
        }
    }

    private func notLoggedIn(_ name: String) -> CertificateProviderError {
        CertificateProviderError(
            .authenticationFailed,
            "FMP \(name): not logged in; call auth(username:password:) first"
        )
    }

    private static func detail(_ envelope: FMPEnvelope) -> String {
        guard let first = envelope.errors.first else { return "" }
        return ": \(first.code): \(first.description)"
    }

    private static func redactingTokens(_ raw: JSONValue) -> JSONValue {
        guard var members = raw.objectValue else { return raw }
        for key in ["token", "refresh_token", "access_token"] where members[key] != nil {
            members[key] = .string("<redacted>")
        }
        return .object(members)
    }

    /// The secret's text for a request body; it lives only as long as the body.
    private static func text(of secret: Secret) -> String {
        secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

}

extension FMPClient.Configuration: AdditionalHeadersConfiguration {}
