public import CertificateProviders
public import Foundation
public import HTTPClient
import JSON
import RemoteProviderSupport

/// A client for the public REST API of a CryptoPro DSS server: the STS (OAuth password grant) and
/// the SignServer (`certificates`, `documents`), as ARCHITECTURE.md ("CryptoPro DSS") defines.
///
/// ```swift
/// let client = CryptoProDSSClient(configuration: .init(baseURL: URL(string: "https://dss.example.com/")!))
/// try await client.login(username: "Leonid", password: Secret("123123"))
/// let certificates = try await client.certificates()
/// let cades = try await client.sign(document: bytes, certificateID: 0, pin: Secret("123"))
/// ```
///
/// Tokens: ``login(username:password:)`` keeps the credentials in memory; the token's `expires_in`
/// is tracked and the client logs in again before a call when less than
/// ``Configuration/renewalMargin`` remains, and once more when a call answers 401; a second 401 is
/// `.authenticationFailed`. Concurrent calls share one login.
///
/// Errors (`CertificateProviderError`), each carrying the server's `Message`:
/// - `.authenticationFailed`: wrong login (STS `invalid_grant` / 401), wrong client secret, not
///   logged in, or 401 after a fresh login;
/// - `.wrongPassword`: the server refused the certificate PIN (a 400/403 to a sign request whose
///   `Message` mentions the PIN, `PIN` or `ПИН`);
/// - `.serverRejected`: any other 4xx (unknown certificate, bad parameters, …);
/// - `.network`: connection failures, 5xx, and answers that are not the protocol (not JSON, wrong
///   shape; the reason names the field); `.timeout` after ``Configuration/timeout``; `.cancelled`.
///
/// Retries: `GET certificates` follows ``Configuration/retryPolicy``. A sign `POST` is sent once and
/// never resent after an ambiguous failure (timeout, dropped connection, 5xx, unreadable answer);
/// it is resent only after a 401, which the server answers before doing anything.
public actor CryptoProDSSClient {
    /// Where the server is and how to talk to it; every field documents its default.
    public struct Configuration: Sendable {
        /// The server's base URL (`https://dss.example.com/`); the applications live below it.
        public var baseURL: URL
        /// The STS (identity centre) application name (default `STS`).
        public var stsApplication: String
        /// The SignServer application name (default `SignServer`).
        public var signServerApplication: String
        /// The OAuth `client_id` registered on the STS (default `cryptopro.cloud.csp`).
        public var clientID: String
        /// The OAuth client id used when none is configured: `cryptopro.cloud.csp`.
        public static let defaultClientID = "cryptopro.cloud.csp"
        /// The OAuth client secret, sent as HTTP Basic `client_id:secret` when set (default nil: public client).
        public var clientSecret: Secret?
        /// The OAuth `resource` (default `urn:cryptopro:dss:signserver:signserver`; a SignServer
        /// installed under another name has `urn:cryptopro:dss:signserver:<name>`).
        public var resource: String
        /// Seconds an HTTP exchange may take (default 30).
        public var timeout: TimeInterval
        /// Log in again before a call when the token has less than this many seconds left (default 30).
        public var renewalMargin: TimeInterval
        /// Retries for safe methods (default ``RetryPolicy/default``; POSTs are never retried).
        public var retryPolicy: RetryPolicy
        /// Which URLs are allowed (default: HTTPS, or HTTP to loopback only).
        public var endpointPolicy: RemoteEndpointPolicy
        /// The time the token's expiry and the renewal margin are measured against (default
        /// ``SessionClock/system``).
        public var clock: SessionClock
        /// Extra headers sent with every request (default none): tests send the emulator's fault header
        /// (``withAdditionalHeaders(_:)``).
        package var additionalHeaders: [(name: String, value: String)] = []

        /// Creates a configuration; every argument documents its default above.
        public init(
            baseURL: URL,
            stsApplication: String = "STS",
            signServerApplication: String = "SignServer",
            clientID: String = Configuration.defaultClientID,
            clientSecret: Secret? = nil,
            resource: String = "urn:cryptopro:dss:signserver:signserver",
            timeout: TimeInterval = 30,
            renewalMargin: TimeInterval = 30,
            retryPolicy: RetryPolicy = .default,
            endpointPolicy: RemoteEndpointPolicy = .default,
            clock: SessionClock = .system
        ) {
            self.baseURL = baseURL
            self.stsApplication = stsApplication
            self.signServerApplication = signServerApplication
            self.clientID = clientID
            self.clientSecret = clientSecret
            self.resource = resource
            self.timeout = timeout
            self.renewalMargin = renewalMargin
            self.retryPolicy = retryPolicy
            self.endpointPolicy = endpointPolicy
            self.clock = clock
        }

        /// `<base>/<STS>/oauth/token`.
        public var tokenURL: URL { url(stsApplication, "oauth", "token") }
        /// `<base>/<SignServer>/rest/api/certificates`.
        public var certificatesURL: URL { url(signServerApplication, "rest", "api", "certificates") }
        /// `<base>/<SignServer>/rest/api/documents`.
        public var documentsURL: URL { url(signServerApplication, "rest", "api", "documents") }

        private func url(_ components: String...) -> URL {
            components.reduce(baseURL) { $0.appendingPathComponent($1) }
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    private let transport: any HTTPTransport
    private var token: CryptoProToken?
    private var credentials: (username: String, password: Secret)?
    private var pendingLogin: Task<CryptoProToken, any Error>?
    /// The certificates and documents URLs, built once (appendingPathComponent on every request
    /// showed in profiles).
    private let routeURLs: (certificates: URL, documents: URL)
    /// The route URLs that passed the endpoint policy (each checked at its first request: the
    /// verdict depends on the URL alone, and parsing it again on every request showed in profiles).
    private var checkedRouteURLs: Set<URL> = []
    /// Certificates already parsed, by their base64 (a list rarely changes; parsing costs ~0.5 ms each).
    private var parsedCertificates: [String: Certificate] = [:]

    /// Creates a client; no request is made.
    /// - Parameters:
    ///   - configuration: where the server is.
    ///   - transport: the networking; nil uses ``CurlTransport`` with the configuration's endpoint policy.
    public init(configuration: Configuration, transport: (any HTTPTransport)? = nil) {
        self.init(configuration: configuration, transport: transport, token: nil, credentials: nil)
    }

    /// Creates a client that resumes a saved token; no request is made.
    /// - Parameters:
    ///   - configuration: where the server is.
    ///   - transport: the networking; nil uses ``CurlTransport`` with the configuration's endpoint policy.
    ///   - token: the saved token, used while valid.
    ///   - credentials: user name and password to log in again when the token expires; nil makes an
    ///     expired token end in `.authenticationFailed`.
    public init(
        configuration: Configuration,
        transport: (any HTTPTransport)? = nil,
        token: CryptoProToken?,
        credentials: (username: String, password: Secret)?
    ) {
        self.token = token
        self.credentials = credentials
        self.configuration = configuration
        routeURLs = (configuration.certificatesURL, configuration.documentsURL)
        self.transport = SecretRedactingTransport(
            transport ?? CurlTransport(endpointPolicy: configuration.endpointPolicy),
            secrets: [configuration.clientSecret, token?.accessToken, credentials?.password]
        )
    }

    // MARK: Session

    /// Whether the client holds a token that is still valid (margin included).
    public var isAuthenticated: Bool {
        token?.isValid(at: configuration.clock.now, margin: configuration.renewalMargin) ?? false
    }

    /// The current token, or nil (for a caller that caches it; it is a secret).
    public var currentToken: CryptoProToken? { token }

    /// Adopts a saved token (no request is made). Without ``login(username:password:)`` or
    /// ``setCredentials(username:password:)`` the client cannot log in again when it expires.
    public func adopt(_ token: CryptoProToken) { self.token = token }

    /// Keeps credentials for logging in again later, without logging in now.
    public func setCredentials(username: String, password: Secret) { credentials = (username, password) }

    /// Forgets the token and the credentials.
    public func logout() {
        token = nil
        credentials = nil
        pendingLogin?.cancel()
        pendingLogin = nil
    }

    /// Obtains a token: `POST <STS>/oauth/token`, form `grant_type=password&username&password&client_id&resource`
    /// (plus HTTP Basic client authentication when a client secret is configured).
    ///
    /// The credentials are kept in memory to log in again when the token expires.
    /// - Returns: the new token.
    /// - Throws: `.authenticationFailed` for a wrong login or client; see the type's error list.
    @discardableResult
    public func login(username: String, password: Secret) async throws -> CryptoProToken {
        credentials = (username, password)
        pendingLogin?.cancel()
        pendingLogin = nil
        let fresh = try await requestToken(username: username, password: password)
        token = fresh
        return fresh
    }

    // MARK: Calls

    /// The user's certificates: `GET <SignServer>/rest/api/certificates`.
    /// - Throws: see the type's error list; `.network` naming the field when an entry is malformed.
    public func certificates() async throws -> [CryptoProCertificate] {
        var request = try makeRequest(.get, routeURLs.certificates)
        request.setHeader("Accept", "application/json")
        let response = try await sendAuthorized(request, name: "certificates")
        let json = try response.json(context: "CryptoPro DSS certificates")
        return try CryptoProDSSClient.decodeCertificates(json, cache: &parsedCertificates)
    }

    /// Signs a document on the server: `POST <SignServer>/rest/api/documents` with
    /// `{"Content": base64, "Signature": {"Type", "Parameters": {"CADESType", "IsDetached", "Hash"}, "CertificateId", "PinCode"}}`.
    ///
    /// Sent once: never retried after a timeout, a dropped connection or a 5xx (the server may have
    /// signed); resent only after a 401 and a fresh login.
    /// - Parameters:
    ///   - document: the document, or its digest when `parameters.isHash`.
    ///   - certificateID: the certificate (`0` = the user's default).
    ///   - pin: the certificate's PIN (`PinCode`), nil for a key without one.
    ///   - parameters: type and options (default detached CAdES-BES of the content).
    /// - Returns: the DER CMS ContentInfo the server made.
    /// - Throws: `.wrongPassword` (PIN), `.serverRejected` (unknown certificate, bad parameters),
    ///   `.invalidParameter` for a hash signature that is not detached; see the type's error list.
    public func sign(
        document: [UInt8],
        certificateID: Int,
        pin: Secret?,
        parameters: CryptoProSignatureParameters = CryptoProSignatureParameters()
    ) async throws -> [UInt8] {
        let request = try signRequest(routeURLs.documents, document, certificateID, pin, parameters)
        let response = try await sendAuthorized(request, name: "sign")
        return try CryptoProDSSClient.decodeSignature(try response.json(context: "CryptoPro DSS sign"))
    }

    /// A `POST` of `{"Content", "Signature"}` to `url` (`…/documents`, `…/transactions`).
    func signRequest(
        _ url: URL,
        _ document: [UInt8],
        _ certificateID: Int,
        _ pin: Secret?,
        _ parameters: CryptoProSignatureParameters
    ) throws -> HTTPRequest {
        if parameters.isHash, !parameters.isDetached {
            throw CertificateProviderError.invalidParameter(
                "CryptoPro DSS sign: a signature of a hash (Hash: True) is always detached; set isDetached"
            )
        }
        var signature: [String: JSONValue] = [
            "Type": .string(parameters.type.rawValue),
            "Parameters": .object(parameters.jsonParameters.mapValues { .string($0) }),
            "CertificateId": .integer(certificateID),
        ]
        let slots = pin.map { [SecretSlot($0)] } ?? []
        if let slot = slots.first { signature["PinCode"] = .string(slot.placeholder) }
        var request = try makeRequest(.post, url)
        request.setHeader("Accept", "application/json")
        try request.setJSONBody(
            ["Content": .string(Data(document).base64EncodedString()), "Signature": .object(signature)],
            secrets: slots
        )
        return request
    }

    // MARK: Response decoding (package: also the fuzz harness's entry points, Tests/Fuzz)

    /// Decodes a successful token answer; `issuedAt` is when the request was sent.
    package static func decodeToken(_ response: HTTPResponse, issuedAt: Date) throws -> CryptoProToken {
        let reader = try JSONObjectReader(
            try response.json(context: "CryptoPro DSS login"),
            context: "CryptoPro DSS login",
            errorCode: .network
        )
        let access = try reader.string("access_token")
        guard !access.isEmpty else {
            throw CertificateProviderError(.network, "CryptoPro DSS login: field 'access_token' is empty")
        }
        let lifetime = try reader.optionalInt("expires_in") ?? 3600
        guard lifetime >= 0 else {
            throw CertificateProviderError(.network, "CryptoPro DSS login: field 'expires_in' is negative")
        }
        let type = try reader.optionalString("token_type") ?? "Bearer"
        guard type.caseInsensitiveCompare("Bearer") == .orderedSame else {
            throw CertificateProviderError(
                .network,
                "CryptoPro DSS login: token_type '\(type)' is not supported (expected Bearer)"
            )
        }
        return CryptoProToken(
            accessToken: Secret(access),
            expiresAt: issuedAt.addingTimeInterval(TimeInterval(lifetime)),
            tokenType: "Bearer"
        )
    }

    /// Decodes a certificates answer (a JSON array); `cache` maps base64 DER to parsed certificates
    /// (at most 64 entries are kept).
    package static func decodeCertificates(
        _ json: JSONValue,
        cache: inout [String: Certificate]
    ) throws -> [CryptoProCertificate] {
        guard let entries = json.arrayValue else {
            throw CertificateProviderError(
                .network,
                "CryptoPro DSS certificates: the body must be a JSON array, found \(json.typeName)"
            )
        }
        return try entries.enumerated().map { index, entry in
            let reader = try JSONObjectReader(
                entry,
                context: "CryptoPro DSS certificates",
                path: "[\(index)].",
                errorCode: .network
            )
            let base64 = try reader.string("CertificateBase64")
            let certificate: Certificate
            if let known = cache[base64] {
                certificate = known
            } else {
                let der = try reader.base64("CertificateBase64")
                do {
                    certificate = try Certificate(derEncoded: der)
                } catch {
                    throw CertificateProviderError(
                        .network,
                        "CryptoPro DSS certificates: field '[\(index)].CertificateBase64' is not a DER certificate"
                    )
                }
                if cache.count >= 64 { cache.removeAll() }
                cache[base64] = certificate
            }
            let status: String?
            switch reader.value("Status") {
            case .string(let text)?: status = text
            case .object(let members)?:
                status = members["Value"]?.stringValue ?? members["Value"]?.intValue.map(String.init)
            case .integer(let number)?: status = String(number)
            default: status = nil
            }
            return CryptoProCertificate(
                id: try reader.int("ID"),
                distinguishedName: try reader.optionalString("DName") ?? certificate.subject,
                certificate: certificate,
                status: status,
                isDefault: try reader.value("IsDefault").map { _ in try reader.bool("IsDefault") } ?? false,
                hasPIN: try reader.value("HasPin").map { _ in try reader.bool("HasPin") } ?? false,
                friendlyName: try reader.optionalString("FriendlyName")
            )
        }
    }

    /// Decodes a sign answer: a JSON string holding the base64 signature.
    package static func decodeSignature(_ json: JSONValue) throws -> [UInt8] {
        guard let text = json.stringValue else {
            throw CertificateProviderError(
                .network,
                "CryptoPro DSS sign: the body must be a JSON string holding the base64 signature, found "
                    + "\(json.typeName)"
            )
        }
        guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters), !data.isEmpty else {
            throw CertificateProviderError(
                .network,
                "CryptoPro DSS sign: the signature the server returned is not base64"
            )
        }
        return Array(data)
    }

    // MARK: Plumbing

    private func requestToken(username: String, password: Secret) async throws -> CryptoProToken {
        var request = try makeRequest(.post, configuration.tokenURL)
        request.setHeader("Accept", "application/json")
        let slot = SecretSlot(password)
        request.setFormBody(
            [
                ("grant_type", "password"), ("username", username), ("password", slot.placeholder),
                ("client_id", configuration.clientID), ("resource", configuration.resource),
            ],
            secrets: [slot]
        )
        if let secret = configuration.clientSecret {
            // RFC 6749 §2.3.1: both parts form-urlencoded, then joined with a colon.
            func encoded(_ text: String) -> String { String(HTTPRequest.formEncoded([(text, "")]).dropLast()) }
            let pair = "\(encoded(configuration.clientID)):\(encoded(CryptoProDSSClient.text(of: secret)))"
            request.setHeader("Authorization", "Basic \(Data(pair.utf8).base64EncodedString())")
        }
        let issuedAt = configuration.clock.now
        let response = try await CertificateProviderError.convertingHTTPErrors {
            try await configuration.retryPolicy.send(request, over: transport)
        }
        guard response.isSuccess else {
            let message = CryptoProDSSClient.serverMessage(response)
            let oauthError = (try? JSONValue(parsing: response.body))?["error"]?.stringValue
            if response.status == 401 || response.status == 403
                || (response.status == 400
                    && ["invalid_grant", "invalid_client", "unauthorized_client"].contains(oauthError ?? ""))
            {
                throw CertificateProviderError(
                    .authenticationFailed,
                    "CryptoPro DSS login: the STS refused the login of '\(username)' (HTTP "
                        + "\(response.status))\(message)"
                )
            }
            throw failure("login", response)
        }
        return try CryptoProDSSClient.decodeToken(response, issuedAt: issuedAt)
    }

    /// A token valid for at least the renewal margin, logging in again when needed (shared by concurrent callers).
    private func validToken(_ name: String, forceRenewalOf stale: CryptoProToken? = nil) async throws -> CryptoProToken
    {
        if let token, token.isValid(at: configuration.clock.now, margin: configuration.renewalMargin),
            stale.map({ $0.accessToken != token.accessToken }) ?? true
        {
            return token
        }
        if let pendingLogin { return try await pendingLogin.value }
        guard let credentials else {
            throw CertificateProviderError(
                .authenticationFailed,
                token == nil
                    ? "CryptoPro DSS \(name): not logged in; call login(username:password:) first"
                    : "CryptoPro DSS \(name): the token has expired and no credentials are kept to log in again; log "
                        + "in again"
            )
        }
        let task = Task { try await self.requestToken(username: credentials.username, password: credentials.password) }
        pendingLogin = task
        defer { pendingLogin = nil }
        let fresh = try await task.value
        token = fresh
        return fresh
    }

    /// Sends with a bearer token; on 401 logs in again once and resends; maps every non-2xx to an error.
    func sendAuthorized(_ request: HTTPRequest, name: String) async throws -> HTTPResponse {
        var current = try await validToken(name)
        var response = try await send(request, token: current)
        if response.status == 401, credentials != nil {
            current = try await validToken(name, forceRenewalOf: current)
            response = try await send(request, token: current)
        }
        guard response.isSuccess else {
            if response.status == 401 {
                throw CertificateProviderError(
                    .authenticationFailed,
                    "CryptoPro DSS \(name): the server refused the token\(credentials == nil ? "" : " after a fresh login")\(CryptoProDSSClient.serverMessage(response)); log in again"
                )
            }
            throw failure(name, response)
        }
        return response
    }

    private func send(_ request: HTTPRequest, token: CryptoProToken) async throws -> HTTPResponse {
        var request = request
        request.setHeader("Authorization", "Bearer \(CryptoProDSSClient.text(of: token.accessToken))")
        return try await CertificateProviderError.convertingHTTPErrors {
            try await configuration.retryPolicy.send(request, over: transport)
        }
    }

    func makeRequest(_ method: HTTPMethod, _ url: URL) throws -> HTTPRequest {
        if !checkedRouteURLs.contains(url) {
            try CertificateProviderError.convertingHTTPErrors { try configuration.endpointPolicy.validate(url) }
            if url == routeURLs.certificates || url == routeURLs.documents { checkedRouteURLs.insert(url) }
        }
        var request = HTTPRequest(method: method, url: url, timeout: configuration.timeout)
        for header in configuration.additionalHeaders { request.setHeader(header.name, header.value) }
        return request
    }

    private func failure(_ name: String, _ response: HTTPResponse) -> CertificateProviderError {
        let message = CryptoProDSSClient.serverMessage(response)
        switch response.status {
        case let status
        where (status == 400 || status == 403) && (name == "sign" || name == "transaction")
            && ["pin", "пин"].contains(where: message.lowercased().contains):
            return CertificateProviderError(
                .wrongPassword,
                "CryptoPro DSS sign: the server refused the certificate PIN (HTTP \(response.status))\(message)"
            )
        case 400..<500:
            return CertificateProviderError(
                .serverRejected,
                "CryptoPro DSS \(name): the server refused the request (HTTP \(response.status))\(message)"
            )
        case 500..<600:
            return CertificateProviderError(
                .network,
                "CryptoPro DSS \(name): the server failed (HTTP \(response.status))\(message); try again later"
            )
        default:
            return CertificateProviderError(
                .network,
                "CryptoPro DSS \(name): unexpected HTTP \(response.status) from the server\(message)"
            )
        }
    }

    /// `: <Message>` from an error body (`Message`, else OAuth `error_description` / `error`), or "".
    package static func serverMessage(_ response: HTTPResponse) -> String {
        guard let json = try? JSONValue(parsing: response.body) else { return "" }
        let message =
            json["Message"]?.stringValue ?? json["error_description"]?.stringValue ?? json["error"]?.stringValue
        guard let message, !message.isEmpty else { return "" }
        return ": \(message.prefix(500))"
    }

    /// The secret's text for a request; it lives only as long as the request.
    private static func text(of secret: Secret) -> String {
        secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}

extension CryptoProDSSClient.Configuration: AdditionalHeadersConfiguration {}
