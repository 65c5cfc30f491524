public import CertificateProviders
public import Foundation
public import HTTPClient
import JSON
import RemoteProviderSupport

/// A client for the Cloud Signature Consortium API v2 subset that remote qualified signing needs:
/// `info`, the OAuth 2.0 client-credentials token, `credentials/list`, `credentials/info`,
/// `credentials/authorize` (and `credentials/authorizeCheck` when the user approves it elsewhere),
/// `signatures/signHash` and `signatures/signPolling` (every method a JSON `POST` to
/// `<base>/csc/v2/<method>` with `Authorization: Bearer <token>`, bytes as standard Base64).
///
/// ```swift
/// let client = CSCClient(configuration: .init(baseURL: url, clientID: "Leonid", clientSecret: Secret("123123")))
/// let credential = try await client.credentialInfo("12831")
/// let sad = try await client.authorize(credentialID: "12831", numSignatures: 1, pin: Secret("123"))
/// let signatures = try await client.signHash(credentialID: "12831", sad: sad.sad, hashes: [digest],
///                                            hashAlgorithm: .sha256, signAlgorithm: "1.2.840.10045.4.3.2")
/// ```
///
/// Tokens: the token endpoint is `<oauth2>/oauth2/token`, where `oauth2` comes from `info` (the
/// base URL when `info` names none); the token's `expires_in` is tracked and a new one is fetched
/// before a call when less than ``Configuration/renewalMargin`` remains, and once more when a call
/// answers 401 (`invalid_token`, `expired_token`); a second 401 is `.authenticationFailed`.
/// Concurrent calls share one token request.
///
/// Errors (`CertificateProviderError`), each carrying the service's `error_description`:
/// - `.authenticationFailed`: the token endpoint refused the client (`invalid_client`,
///   `invalid_grant`, 401), or a call was refused with a fresh token;
/// - `.wrongPassword`: `credentials/authorize` refused the PIN or OTP (`invalid_pin`, `invalid_otp`,
///   or a description naming the PIN or OTP);
/// - `.authorizationExpired`: `signatures/signHash` refused the SAD as expired or used up;
/// - `.approvalDeclined`, `.approvalExpired`: `signatures/signPolling` or `credentials/authorizeCheck`
///   answered that the user declined (`access_denied`) or did not decide in time (`expired_request`);
/// - `.serverRejected`: any other 4xx; `.network`: connection failures, 5xx and answers that are not
///   the protocol; `.timeout`; `.cancelled`.
///
/// Retries: every method is a POST, sent once and resent only after a 401, which the service answers
/// before doing anything (an authorize or signHash is never repeated after an ambiguous failure: they
/// go on a new connection, so that curl never sends them again when a kept-alive connection closes
/// without an answer).
/// Connection failures, timeouts and 5xx answers are marked transient: a wait that polls
/// (`signPolling`, `authorizeCheck`) asks again on its next poll instead of failing.
public actor CSCClient {
    /// Where the service is and how to talk to it; every field documents its default.
    public struct Configuration: Sendable {
        /// The service's base URL; methods live at `<base>/csc/v2/<method>`.
        public var baseURL: URL
        /// The OAuth 2.0 `client_id`.
        public var clientID: String
        /// The OAuth 2.0 client secret (default nil: a public client).
        public var clientSecret: Secret?
        /// Whether the client secret goes as HTTP Basic instead of the form field `client_secret`
        /// (default false: in the form).
        public var sendsClientSecretAsBasic: Bool
        /// Seconds an HTTP exchange may take (default 30).
        public var timeout: TimeInterval
        /// Fetch a new token before a call when the current one has less than this many seconds
        /// left (default 30).
        public var renewalMargin: TimeInterval
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
            clientID: String,
            clientSecret: Secret? = nil,
            sendsClientSecretAsBasic: Bool = false,
            timeout: TimeInterval = 30,
            renewalMargin: TimeInterval = 30,
            endpointPolicy: RemoteEndpointPolicy = .default,
            clock: SessionClock = .system
        ) {
            self.baseURL = baseURL
            self.clientID = clientID
            self.clientSecret = clientSecret
            self.sendsClientSecretAsBasic = sendsClientSecretAsBasic
            self.timeout = timeout
            self.renewalMargin = renewalMargin
            self.endpointPolicy = endpointPolicy
            self.clock = clock
        }

        /// `<base>/csc/v2/<method>`.
        public func methodURL(_ method: String) -> URL {
            method.split(separator: "/").reduce(baseURL.appendingPathComponent("csc").appendingPathComponent("v2")) {
                $0.appendingPathComponent(String($1))
            }
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    private let transport: any HTTPTransport
    private var token: CSCToken?
    private var pendingToken: Task<CSCToken, any Error>?
    private var serviceInfo: CSCServiceInfo?
    /// The checked URL of each method, made once: the configuration never changes, and making one
    /// (Foundation URL path appends and the endpoint policy) cost a good part of a round trip.
    private var methodURLs: [String: URL] = [:]

    /// Creates a client; no request is made.
    /// - Parameters:
    ///   - configuration: where the service is.
    ///   - transport: the networking; nil uses ``CurlTransport`` with the configuration's endpoint policy.
    public init(configuration: Configuration, transport: (any HTTPTransport)? = nil) {
        self.configuration = configuration
        self.transport = SecretRedactingTransport(
            transport ?? CurlTransport(endpointPolicy: configuration.endpointPolicy),
            secrets: [configuration.clientSecret]
        )
    }

    /// The current token, or nil (it is a secret).
    public var currentToken: CSCToken? { token }

    // MARK: Methods

    /// `info`: what the service offers (kept for the token endpoint; no token needed).
    /// - Throws: `.serverRejected`, `.network`, `.timeout`.
    public func info() async throws -> CSCServiceInfo {
        var request = try methodRequest("info")
        try request.setJSONBody([:])
        let response = try await CertificateProviderError.convertingHTTPErrors { try await transport.send(request) }
        guard response.isSuccess else { throw failure("info", response) }
        let reader = try JSONObjectReader(
            try response.json(context: "CSC info"),
            context: "CSC info",
            errorCode: .network
        )
        let oauth2 = try reader.optionalString("oauth2").flatMap { $0.isEmpty ? nil : URL(string: $0) }
        let algorithms =
            try reader.value("signAlgorithms").map { _ in
                try reader.object("signAlgorithms").array("algos").compactMap(\.stringValue)
            } ?? []
        let info = CSCServiceInfo(
            specs: try reader.string("specs"),
            name: try reader.string("name"),
            region: try reader.optionalString("region") ?? "",
            lang: try reader.optionalString("lang") ?? "",
            authTypes: try reader.array("authType").compactMap(\.stringValue),
            oauth2: oauth2,
            methods: try reader.array("methods").compactMap(\.stringValue),
            signAlgorithms: algorithms
        )
        serviceInfo = info
        return info
    }

    /// `credentials/list`: the IDs of the client's credentials and, with `details`, their
    /// descriptions (`credentialInfo`, `certificates: "chain"`, `certInfo`, `authInfo`).
    /// - Returns: the IDs and the descriptions the service returned (empty without `details`).
    /// - Throws: as the type's documentation says.
    public func listCredentials(details: Bool = false) async throws -> (ids: [String], credentials: [CSCCredential]) {
        let body: JSONValue =
            details ? ["credentialInfo": true, "certificates": "chain", "certInfo": true, "authInfo": true] : [:]
        let json = try await call("credentials/list", body)
        let reader = try JSONObjectReader(json, context: "CSC credentials/list", errorCode: .network)
        let ids = try reader.array("credentialIDs").enumerated().map { index, value -> String in
            guard let id = value.stringValue else {
                throw CertificateProviderError(
                    .network,
                    "CSC credentials/list: field 'credentialIDs[\(index)]' must be a string"
                )
            }
            return id
        }
        guard details, reader.value("credentialInfos") != nil else { return (ids, []) }
        let credentials = try reader.objects("credentialInfos").map { entry in
            try CSCClient.decodeCredential(entry, id: try entry.string("credentialID"))
        }
        return (ids, credentials)
    }

    /// `credentials/info` with the certificate chain, certificate and auth information.
    /// - Throws: `.serverRejected` for an unknown credential; as the type's documentation says.
    public func credentialInfo(_ credentialID: String) async throws -> CSCCredential {
        let json = try await call(
            "credentials/info",
            [
                "credentialID": .string(credentialID), "certificates": "chain",
                "certInfo": true, "authInfo": true,
            ]
        )
        return try CSCClient.decodeCredential(
            try JSONObjectReader(json, context: "CSC credentials/info", errorCode: .network),
            id: credentialID
        )
    }

    /// `credentials/authorize`, without waiting: the SAD for `numSignatures` signatures, or the
    /// handle of an authorization the service completes with the user (HTTP 202 `{"handle"}`), which
    /// ``authorizeCheck(handle:)`` asks about.
    /// - Parameters:
    ///   - credentialID: the credential.
    ///   - numSignatures: how many signatures the SAD allows.
    ///   - hashes: the hashes the SAD is bound to (SCAL 2; nil for SCAL 1).
    ///   - hashAlgorithm: the hashes' algorithm (sent as `hashAlgorithmOID` with `hashes`).
    ///   - pin: the PIN (`authData` `PIN`), when the credential asks for one.
    ///   - otp: the one-time password (`authData` `OTP`), when the credential asks for one.
    /// - Throws: `.wrongPassword` for a refused PIN or OTP; `.network` for an answer with neither a
    ///   SAD nor a handle; as the type's documentation says.
    public func startAuthorization(
        credentialID: String,
        numSignatures: Int,
        hashes: [[UInt8]]? = nil,
        hashAlgorithm: DigestAlgorithm? = nil,
        pin: Secret? = nil,
        otp: Secret? = nil
    ) async throws -> AuthorizationResult {
        var body: [String: JSONValue] = [
            "credentialID": .string(credentialID), "numSignatures": .integer(numSignatures),
        ]
        if let hashes {
            body["hashes"] = .array(hashes.map { .string(Data($0).base64EncodedString()) })
            if let hashAlgorithm { body["hashAlgorithmOID"] = .string(hashAlgorithm.oid) }
        }
        var slots: [SecretSlot] = []
        var authData: [JSONValue] = []
        for (id, secret) in [("PIN", pin), ("OTP", otp)] {
            guard let secret else { continue }
            let slot = SecretSlot(secret)
            slots.append(slot)
            authData.append(["id": .string(id), "value": .string(slot.placeholder)])
        }
        if !authData.isEmpty { body["authData"] = .array(authData) }
        let json = try await call("credentials/authorize", .object(body), secrets: slots)
        return try CSCClient.authorizationResult(json, method: "credentials/authorize")
    }

    /// `signatures/signHash`: the raw signature values of `hashes`, in order.
    /// - Parameters:
    ///   - credentialID: the credential.
    ///   - sad: the SAD from ``authorize(credentialID:numSignatures:hashes:hashAlgorithm:pin:otp:)``.
    ///   - hashes: the hashes to sign.
    ///   - hashAlgorithm: their algorithm (`hashAlgorithmOID`).
    ///   - signAlgorithm: the signature algorithm OID (`signAlgo`), one of the key's `key.algo`.
    /// - Returns: one signature value per hash (not yet checked: the caller verifies them).
    /// - Throws: `.authorizationExpired` when the SAD expired or is used up; `.network` when the
    ///   service returns another number of signatures; as the type's documentation says.
    public func signHash(
        credentialID: String,
        sad: Secret,
        hashes: [[UInt8]],
        hashAlgorithm: DigestAlgorithm,
        signAlgorithm: String
    ) async throws -> [[UInt8]] {
        let slot = SecretSlot(sad)
        let members = CSCClient.signHashMembers(credentialID, slot, hashes, hashAlgorithm, signAlgorithm)
        let json = try await call("signatures/signHash", .object(members), secrets: [slot])
        return try CSCClient.signatures(in: json, method: "signatures/signHash", count: hashes.count)
    }

    /// The members of a `signatures/signHash` request, the SAD as `slot`'s placeholder (the
    /// asynchronous mode adds its own).
    static func signHashMembers(
        _ credentialID: String,
        _ slot: SecretSlot,
        _ hashes: [[UInt8]],
        _ hashAlgorithm: DigestAlgorithm,
        _ signAlgorithm: String
    ) -> [String: JSONValue] {
        [
            "credentialID": .string(credentialID), "SAD": .string(slot.placeholder),
            "hashes": .array(hashes.map { .string(Data($0).base64EncodedString()) }),
            "hashAlgorithmOID": .string(hashAlgorithm.oid), "signAlgo": .string(signAlgorithm),
        ]
    }

    /// The `signatures` of a `signHash` or `signPolling` answer: `count` non-empty base64 values.
    /// - Throws: `.network` naming the field when the answer is not that.
    static func signatures(in json: JSONValue, method: String, count: Int) throws -> [[UInt8]] {
        let reader = try JSONObjectReader(json, context: "CSC \(method)", errorCode: .network)
        let signatures = try reader.array("signatures").enumerated().map { index, value -> [UInt8] in
            guard let text = value.stringValue, let data = Data(base64Encoded: text), !data.isEmpty else {
                throw CertificateProviderError(
                    .network,
                    "CSC \(method): field 'signatures[\(index)]' must be a non-empty base64 string"
                )
            }
            return Array(data)
        }
        guard signatures.count == count else {
            throw CertificateProviderError(
                .network,
                "CSC \(method): the service returned \(signatures.count) signatures for \(count) hashes"
            )
        }
        return signatures
    }

    // MARK: Decoding

    /// Decodes a `credentials/info` answer (or one `credentialInfos` entry).
    package static func decodeCredential(_ reader: JSONObjectReader, id: String) throws -> CSCCredential {
        let key = try reader.object("key")
        let certificates: [Certificate]
        let certificateStatus: String?
        if reader.value("cert") != nil {
            let cert = try reader.object("cert")
            certificateStatus = try cert.optionalString("status")
            certificates = try (cert.value("certificates") == nil ? [] : cert.array("certificates")).enumerated().map {
                index,
                value in
                guard let text = value.stringValue,
                    let der = Data(base64Encoded: text, options: .ignoreUnknownCharacters),
                    let certificate = try? Certificate(derEncoded: Array(der))
                else {
                    throw CertificateProviderError(
                        .network,
                        "CSC credential \(id): field 'cert.certificates[\(index)]' is not a base64 DER certificate"
                    )
                }
                return certificate
            }
        } else {
            (certificates, certificateStatus) = ([], nil)
        }
        var authMode = "implicit"
        var objects: [CSCCredential.AuthObject] = []
        if reader.value("auth") != nil {
            let auth = try reader.object("auth")
            authMode = try auth.optionalString("mode") ?? authMode
            if auth.value("objects") != nil {
                objects = try auth.objects("objects").map {
                    CSCCredential.AuthObject(
                        type: try $0.optionalString("type") ?? "",
                        id: try $0.string("id"),
                        format: try $0.optionalString("format"),
                        label: try $0.optionalString("label")
                    )
                }
            }
        }
        let scalText = try reader.optionalString("SCAL") ?? "1"
        guard let scal = Int(scalText), scal == 1 || scal == 2 else {
            throw CertificateProviderError(
                .network,
                "CSC credential \(id): field 'SCAL' must be \"1\" or \"2\", found \"\(scalText)\""
            )
        }
        return CSCCredential(
            id: id,
            keyStatus: try key.optionalString("status") ?? "enabled",
            keyAlgorithms: try key.array("algo").compactMap(\.stringValue),
            keyLength: try key.optionalInt("len") ?? 0,
            keyCurve: try key.optionalString("curve"),
            certificateStatus: certificateStatus,
            certificates: certificates,
            authMode: authMode,
            authObjects: objects,
            scal: scal,
            multisign: max(1, try reader.optionalInt("multisign") ?? 1)
        )
    }

    // MARK: Plumbing

    /// The methods that make or use up something on the service (an authorization, a SAD, an
    /// asynchronous operation): sent at most once (``HTTPClient/HTTPRequest/atMostOnce``).
    static let atMostOnceMethods: Set<String> = ["credentials/authorize", "signatures/signHash"]

    /// Sends a method call with a valid token; on 401 fetches a new token once and resends.
    func call(_ method: String, _ body: JSONValue, secrets: [SecretSlot] = []) async throws -> JSONValue {
        var request = try methodRequest(method)
        request.atMostOnce = CSCClient.atMostOnceMethods.contains(method)
        if secrets.isEmpty { try request.setJSONBody(body) } else { try request.setJSONBody(body, secrets: secrets) }
        var current = try await validToken()
        var response = try await send(request, token: current)
        if response.status == 401 {
            current = try await validToken(forceRenewalOf: current)
            response = try await send(request, token: current)
            if response.status == 401 {
                throw CertificateProviderError(
                    .authenticationFailed,
                    "CSC \(method): the service refused a fresh access token\(CSCClient.serverMessage(response)); "
                        + "check the client's permissions"
                )
            }
        }
        guard response.isSuccess else { throw failure(method, response) }
        return try response.json(context: "CSC \(method)")
    }

    private func send(_ request: HTTPRequest, token: CSCToken) async throws -> HTTPResponse {
        var request = request
        request.setHeader("Authorization", "Bearer \(CSCClient.text(of: token.accessToken))")
        do {
            return try await CertificateProviderError.convertingHTTPErrors { try await transport.send(request) }
        } catch let error as CertificateProviderError where error.code == .network || error.code == .timeout {
            throw error.markedTransient()
        }
    }

    /// A token valid for at least the renewal margin (shared by concurrent callers).
    private func validToken(forceRenewalOf stale: CSCToken? = nil) async throws -> CSCToken {
        if let token, token.isValid(at: configuration.clock.now, margin: configuration.renewalMargin),
            stale.map({ $0.accessToken != token.accessToken }) ?? true
        {
            return token
        }
        if let pendingToken { return try await pendingToken.value }
        let task = Task { try await self.requestToken() }
        pendingToken = task
        defer { pendingToken = nil }
        let fresh = try await task.value
        token = fresh
        return fresh
    }

    private func requestToken() async throws -> CSCToken {
        let info: CSCServiceInfo
        if let serviceInfo { info = serviceInfo } else { info = try await self.info() }
        let tokenURL = (info.oauth2 ?? configuration.baseURL).appendingPathComponent("oauth2").appendingPathComponent(
            "token"
        )
        var request = try makeRequest(tokenURL)
        request.setHeader("Accept", "application/json")
        var fields: [(name: String, value: String)] = [
            ("grant_type", "client_credentials"), ("client_id", configuration.clientID),
        ]
        if let secret = configuration.clientSecret {
            if configuration.sendsClientSecretAsBasic {
                // RFC 6749 §2.3.1: both parts form-urlencoded, then joined with a colon.
                func encoded(_ text: String) -> String { String(HTTPRequest.formEncoded([(text, "")]).dropLast()) }
                let pair = "\(encoded(configuration.clientID)):\(encoded(CSCClient.text(of: secret)))"
                request.setHeader("Authorization", "Basic \(Data(pair.utf8).base64EncodedString())")
                request.setFormBody(fields)
            } else {
                let slot = SecretSlot(secret)
                fields.append(("client_secret", slot.placeholder))
                request.setFormBody(fields, secrets: [slot])
            }
        } else {
            request.setFormBody(fields)
        }
        let issuedAt = configuration.clock.now
        let response = try await CertificateProviderError.convertingHTTPErrors { try await transport.send(request) }
        guard response.isSuccess else {
            let error = (try? JSONValue(parsing: response.body))?["error"]?.stringValue ?? ""
            if response.status == 401 || ["invalid_client", "invalid_grant", "unauthorized_client"].contains(error) {
                throw CertificateProviderError(
                    .authenticationFailed,
                    "CSC token: the authorization server refused client '\(configuration.clientID)' (HTTP "
                        + "\(response.status))\(CSCClient.serverMessage(response)); check clientID and clientSecret"
                )
            }
            throw failure("token", response)
        }
        let reader = try JSONObjectReader(
            try response.json(context: "CSC token"),
            context: "CSC token",
            errorCode: .network
        )
        let accessToken = try reader.string("access_token")
        if let type = try reader.optionalString("token_type"), type.lowercased() != "bearer" {
            throw CertificateProviderError(.network, "CSC token: token_type '\(type)' is not supported (Bearer)")
        }
        let lifetime = try reader.optionalInt("expires_in") ?? 3600
        return CSCToken(
            accessToken: Secret(accessToken),
            expiresAt: issuedAt.addingTimeInterval(TimeInterval(lifetime))
        )
    }

    /// A request to `<base>/csc/v2/<method>`.
    private func methodRequest(_ method: String) throws -> HTTPRequest {
        if let url = methodURLs[method] { return request(to: url) }
        let url = configuration.methodURL(method)
        let request = try makeRequest(url)
        methodURLs[method] = url
        return request
    }

    private func makeRequest(_ url: URL) throws -> HTTPRequest {
        try CertificateProviderError.convertingHTTPErrors { try configuration.endpointPolicy.validate(url) }
        return request(to: url)
    }

    /// A POST to an already checked URL with the configured headers.
    private func request(to url: URL) -> HTTPRequest {
        var request = HTTPRequest(method: .post, url: url, timeout: configuration.timeout)
        for header in configuration.additionalHeaders { request.setHeader(header.name, header.value) }
        return request
    }

    private func failure(_ method: String, _ response: HTTPResponse) -> CertificateProviderError {
        let message = CSCClient.serverMessage(response)
        let json = try? JSONValue(parsing: response.body)
        let code = (json?["error"]?.stringValue ?? "").lowercased()
        let description = (json?["error_description"]?.stringValue ?? "").lowercased()
        switch response.status {
        case 400..<500
        where method == "credentials/authorize"
            && (["invalid_pin", "invalid_otp"].contains(code) || description.contains("pin")
                || description.contains("otp")):
            return CertificateProviderError(
                .wrongPassword,
                "CSC credentials/authorize: the service refused the PIN or OTP (HTTP \(response.status))\(message)"
            )
        case 400..<500
        where method == "signatures/signHash"
            && (code == "expired_sad"
                || (description.contains("sad") && (description.contains("expired") || description.contains("used")))):
            return CertificateProviderError(
                .authorizationExpired,
                "CSC signatures/signHash: the signature activation data is no longer valid (HTTP "
                    + "\(response.status))\(message); sign again"
            )
        case 400..<500 where CSCClient.pollingMethods.contains(method) && code == "access_denied":
            return CertificateProviderError(
                .approvalDeclined,
                "CSC \(method): the user declined (HTTP \(response.status))\(message)"
            )
        case 400..<500 where CSCClient.pollingMethods.contains(method) && code == "expired_request":
            return CertificateProviderError(
                .approvalExpired,
                "CSC \(method): the operation expired before it was approved (HTTP \(response.status))"
                    + "\(message); sign again"
            )
        case 400..<500:
            return CertificateProviderError(
                .serverRejected,
                "CSC \(method): the service refused the request (HTTP \(response.status))\(message)"
            )
        case 500..<600:
            return CertificateProviderError(
                .network,
                "CSC \(method): the service failed (HTTP \(response.status))\(message); try again later"
            ).markedTransient()
        default:
            return CertificateProviderError(.network, "CSC \(method): unexpected HTTP \(response.status)\(message)")
        }
    }

    /// `: <error>: <error_description>` from an error body, or "".
    package static func serverMessage(_ response: HTTPResponse) -> String {
        guard let json = try? JSONValue(parsing: response.body) else { return "" }
        let parts = [json["error"]?.stringValue, json["error_description"]?.stringValue].compactMap { $0 }.filter {
            !$0.isEmpty
        }
        guard !parts.isEmpty else { return "" }
        return ": \(parts.joined(separator: ": ").prefix(500))"
    }

    private static func text(of secret: Secret) -> String {
        secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}

extension CSCClient.Configuration: AdditionalHeadersConfiguration {}
