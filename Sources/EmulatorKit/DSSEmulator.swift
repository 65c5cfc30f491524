import CertificateProviders
public import Foundation
public import JSON
import Synchronization

/// A loopback server speaking the Foresight Mobile Platform DSS API and the CryptoPro DSS REST
/// subset (`/STS/…`, `/SignServer/…`, see `CryptoProRouter`) and the CSC API v2 subset (`/csc/v2/…`,
/// `/oauth2/token`, see ``CSCEmulatorCredentials``) with real crypto, for development, demos and
/// tests (libmicrohttpd, thread per connection). The APIs share one store of users, keys, tokens
/// and faults.
///
/// ```swift
/// let emulator = try DSSEmulator()
/// let baseURL = try emulator.start()          // http://127.0.0.1:<ephemeral port>/
/// defer { emulator.stop() }
/// ```
///
/// It serves the route table of ARCHITECTURE.md over the ``EmulatorSeed`` (by default
/// ``EmulatorSeed/standard()``: user `Leonid` / `123123`, certificate 12831 with PIN `123`, first
/// signature id 121). A sign request signs the chosen cell's value (UTF-8) as an attached CAdES-BES
/// with the chosen certificate's key. Every input is validated; errors are FMP envelopes with the
/// right status (400, 401, 403, 404, 405, 413). With ``Configuration/faultsEnabled``, the request
/// header ``Fault/headerName`` selects a ``Fault``.
///
/// This is a development server: its keys are made at start with `CertificateIssuer`, its state lives in
/// memory, and ``receivedRequests`` keeps request bodies for tests to inspect, with passwords and PINs
/// replaced by ``redactedValue`` unless ``Configuration/requestLogKeepsSecrets`` is set.
public final class DSSEmulator: Sendable {
    /// How the emulator runs; every field documents its default.
    public struct Configuration: Sendable {
        /// The address to bind, an IP literal (default `127.0.0.1`; `::1` for IPv6).
        public var host: String
        /// The port; 0 picks a free ephemeral port (default 0).
        public var port: UInt16
        /// The `{v}` of `/api/{v}/…` (default `v1`).
        public var apiVersion: String
        /// Whether the ``Fault/headerName`` header is honoured (default false).
        public var faultsEnabled: Bool
        /// The largest request body accepted; larger ones get 413 (default 1 MiB).
        public var maxBodyBytes: Int
        /// libmicrohttpd's per-connection memory pool (headers and read buffer; default 64 KiB).
        public var connectionMemoryLimit: Int
        /// Seconds an idle connection stays open (default 30).
        public var connectionTimeoutSeconds: Int
        /// The most simultaneous connections (default 64).
        public var connectionLimit: Int
        /// Lifetime of an access token in seconds (default 3600).
        public var accessTokenLifetime: TimeInterval
        /// Lifetime of a refresh token in seconds (default 30 days).
        public var refreshTokenLifetime: TimeInterval
        /// The longest delay a `delay=<ms>` fault may ask for, in milliseconds (default 60 000).
        public var maxFaultDelayMilliseconds: Int
        /// How many requests ``receivedRequests`` keeps, oldest dropped first (default 1000; 0 keeps none).
        public var requestLogLimit: Int
        /// Whether ``receivedRequests`` keeps passwords, PINs and client secrets as sent (default
        /// false: their values are replaced by ``DSSEmulator/redactedValue``). Only tests that check
        /// the exact bytes on the wire set it.
        public var requestLogKeepsSecrets: Bool

        /// HTTPS instead of HTTP (default nil: plain HTTP).
        public var tls: TLS?
        /// A directory that keeps the CA, every key and certificate, the users and the stored
        /// signatures across runs (made 0700; `state.json` 0600, written atomically after each
        /// change; a damaged one is an error, never replaced). The seed given to `init` is used
        /// only when the directory holds no state yet. With port 0, the port of the last run is
        /// tried first, so that the URLs in the certificates stay valid. Default nil: a fresh state
        /// in memory.
        public var stateDirectory: String?
        /// Whether ``DSSEmulator/start()`` gives the users' certificates and the TSA certificate
        /// AIA OCSP and CRL distribution point URLs of its own `/ocsp` and `/crl` routes: their keys
        /// get new certificates (same subject, new serial) whenever the base URL differs from the
        /// one their certificates name; OCSP keeps answering `good` for the earlier ones. Default
        /// false: the seed's certificates as given.
        public var issuesRevocationURLs: Bool
        /// Seconds after which an operation waiting for a person (a CSC asynchronous `signHash`)
        /// approves itself, as if someone approved it (default nil: it waits for
        /// ``DSSEmulator/approve(operationID:)`` or the admin route until it expires).
        public var autoApproveAfter: TimeInterval?
        /// Seconds a CSC credential authorization waits for the user's approval: when set,
        /// `credentials/authorize` for a credential in `implicit` mode (no PIN, no OTP: the service asks
        /// the user itself) answers 202 `{"handle"}` and the SAD comes from `credentials/authorizeCheck`
        /// once the authorization is approved like an asynchronous `signHash` (default nil: the SAD
        /// at once).
        public var authorizationApprovalValidity: TimeInterval?
        /// Seconds a CryptoPro DSS transaction waits for the user's confirmation before it expires
        /// (default 600).
        public var confirmationValidity: TimeInterval
        /// How many signatures one CSC authorization (SAD) allows, each credential's `multisign`
        /// (default ``CSCEmulatorCredentials/multisign``). The bench raises it so that one SAD lasts
        /// its `signHash` rows.
        public var cscSignaturesPerAuthorization: Int

        /// How the emulator serves HTTPS (libmicrohttpd with GnuTLS).
        public struct TLS: Sendable {
            /// The server's identity (key, certificate, chain); nil uses the seed's
            /// ``EmulatorSeed/tlsServerIdentity`` (issued by the emulator CA for `localhost`,
            /// `127.0.0.1` and `::1`). Its key must be a `LocalSigningKey`. Default nil.
            public var serverIdentity: SigningIdentity?
            /// The CAs a client certificate must chain to; when not empty every connection must
            /// present a valid client certificate, or it is closed with a TLS alert
            /// (`certificate_required`, `unknown_ca`). Default empty: none is asked for.
            public var clientCertificateAuthorities: [Certificate]

            /// Creates a TLS configuration.
            public init(serverIdentity: SigningIdentity? = nil, clientCertificateAuthorities: [Certificate] = []) {
                self.serverIdentity = serverIdentity
                self.clientCertificateAuthorities = clientCertificateAuthorities
            }
        }

        /// Creates a configuration.
        public init(
            host: String = "127.0.0.1",
            port: UInt16 = 0,
            apiVersion: String = "v1",
            faultsEnabled: Bool = false,
            maxBodyBytes: Int = 1 << 20,
            connectionMemoryLimit: Int = 64 << 10,
            connectionTimeoutSeconds: Int = 30,
            connectionLimit: Int = 64,
            accessTokenLifetime: TimeInterval = 3600,
            refreshTokenLifetime: TimeInterval = 30 * 86_400,
            maxFaultDelayMilliseconds: Int = 60_000,
            requestLogLimit: Int = 1000,
            requestLogKeepsSecrets: Bool = false,
            tls: TLS? = nil,
            stateDirectory: String? = nil,
            issuesRevocationURLs: Bool = false,
            autoApproveAfter: TimeInterval? = nil,
            confirmationValidity: TimeInterval = 600,
            authorizationApprovalValidity: TimeInterval? = nil,
            cscSignaturesPerAuthorization: Int = CSCEmulatorCredentials.multisign
        ) {
            self.cscSignaturesPerAuthorization = max(1, cscSignaturesPerAuthorization)
            self.autoApproveAfter = autoApproveAfter
            self.authorizationApprovalValidity = authorizationApprovalValidity
            self.confirmationValidity = confirmationValidity
            self.tls = tls
            self.stateDirectory = stateDirectory
            self.issuesRevocationURLs = issuesRevocationURLs
            self.host = host
            self.port = port
            self.apiVersion = apiVersion
            self.faultsEnabled = faultsEnabled
            self.maxBodyBytes = maxBodyBytes
            self.connectionMemoryLimit = connectionMemoryLimit
            self.connectionTimeoutSeconds = connectionTimeoutSeconds
            self.connectionLimit = connectionLimit
            self.accessTokenLifetime = accessTokenLifetime
            self.refreshTokenLifetime = refreshTokenLifetime
            self.maxFaultDelayMilliseconds = maxFaultDelayMilliseconds
            self.requestLogLimit = requestLogLimit
            self.requestLogKeepsSecrets = requestLogKeepsSecrets
        }
    }

    /// A failure the emulator acts out when ``Configuration/faultsEnabled`` is set and a request
    /// carries `X-Emulator-Fault: <value>`.
    public enum Fault: Sendable, Equatable, CustomStringConvertible {
        /// `status-500`: answer 500 with an error envelope, doing nothing.
        case status500
        /// `malformed-json`: answer 200 with a body that is not JSON, doing nothing.
        case malformedJSON
        /// `delay=<ms>`: wait, then handle the request normally.
        case delay(milliseconds: Int)
        /// `drop`: close the connection without answering, doing nothing.
        case drop
        /// `expired-token`: expire the request's bearer token first, so the route answers 401.
        case expiredToken
        /// `large-body=<bytes>`: answer 200 with a JSON body of that many bytes (at most 64 MiB),
        /// doing nothing (tests response size limits).
        case largeBody(bytes: Int)
        /// `sad-expired`: CSC `signatures/signHash` finds its SAD expired.
        case sadExpired
        /// `wrong-hash`: CSC `signatures/signHash` signs another hash than the one sent.
        case wrongHash

        /// The request header that selects a fault.
        public static let headerName = "X-Emulator-Fault"

        /// Parses a header value; nil when it names no fault.
        public init?(headerValue: String) {
            let value = headerValue.trimmingCharacters(in: .whitespaces).lowercased()
            switch value {
            case "status-500": self = .status500
            case "malformed-json": self = .malformedJSON
            case "drop": self = .drop
            case "expired-token": self = .expiredToken
            case "sad-expired": self = .sadExpired
            case "wrong-hash": self = .wrongHash
            default:
                if value.hasPrefix("large-body="), let bytes = Int(value.dropFirst(11)),
                    (16...(64 << 20)).contains(bytes)
                {
                    self = .largeBody(bytes: bytes)
                    return
                }
                guard value.hasPrefix("delay="), let milliseconds = Int(value.dropFirst(6)), milliseconds >= 0 else {
                    return nil
                }
                self = .delay(milliseconds: milliseconds)
            }
        }

        /// The header value selecting this fault.
        public var headerValue: String {
            switch self {
            case .status500: return "status-500"
            case .malformedJSON: return "malformed-json"
            case .delay(let milliseconds): return "delay=\(milliseconds)"
            case .drop: return "drop"
            case .expiredToken: return "expired-token"
            case .largeBody(let bytes): return "large-body=\(bytes)"
            case .sadExpired: return "sad-expired"
            case .wrongHash: return "wrong-hash"
            }
        }

        /// The header value.
        public var description: String { headerValue }
    }

    /// One request as the emulator received it (before any fault was applied).
    public struct ReceivedRequest: Sendable {
        /// The method (`POST`).
        public var method: String
        /// The decoded path (`/api/v1/dss/Leonid_environment/Leonid_project/sign/`).
        public var path: String
        /// The header fields.
        public var headers: [(name: String, value: String)]
        /// The body (empty when it was over the limit).
        public var body: [UInt8]
        /// When it arrived.
        public var receivedAt: Date

        /// The first value of a header (case-insensitive), or nil.
        public func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }

        /// The body parsed as JSON, or nil when it is not JSON.
        public var json: JSONValue? { try? JSONValue(parsing: body) }

        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// The configuration in force.
    public let configuration: Configuration
    /// The seed the emulator serves (users, certificates, cells): with
    /// ``Configuration/issuesRevocationURLs``, the users' certificates change at ``start()``.
    public var seed: EmulatorSeed { store.seed }

    let store: EmulatorStore
    private let log = Mutex<[ReceivedRequest]>([])
    private let running = Mutex<(server: MicroHTTPServer, url: URL)?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let signer: any EmulatorSigner
    private let cscSADs = CSCSADStore()
    /// The operations that wait for a person (``EmulatorApprovals``).
    let approvals: EmulatorApprovals
    /// The CA services: TSA, OCSP, CRL (`EmulatorPKI`, `TSARouter`, `RevocationRouter`).
    let pki: EmulatorPKI

    /// Creates an emulator (not started yet).
    /// - Parameters:
    ///   - configuration: how to run (default: 127.0.0.1, ephemeral port, no faults).
    ///   - seed: the data to serve; nil makes ``EmulatorSeed/standard()`` (fresh keys). With a
    ///     ``Configuration/stateDirectory`` that holds a state, the state is served instead.
    /// - Throws: `.cryptoFailure` when the standard seed cannot be made; with a state directory,
    ///   `.storeCorrupted` for a damaged state file and `.fileSystem` for one that cannot be written.
    public init(configuration: Configuration = Configuration(), seed: EmulatorSeed? = nil) throws {
        self.configuration = configuration
        self.signer = CMSEmulatorSigner()
        if let directory = configuration.stateDirectory {
            (store, pki) = try Self.openState(in: directory, seed: seed)
        } else {
            let seed = try seed ?? EmulatorSeed.standard()
            self.store = EmulatorStore(seed: seed)
            self.pki = try EmulatorPKI(seed: seed)
        }
        approvals = EmulatorApprovals(stateFile: store.stateFile, autoApproveAfter: configuration.autoApproveAfter)
    }

    deinit { stop() }

    /// Starts listening and returns the base URL (`http://127.0.0.1:<port>/`, `https://…` with
    /// ``Configuration/tls``).
    /// - Throws: `.network` when the address cannot be bound; `.invalidParameter` when already
    ///   running or the host is not an IP literal.
    @discardableResult
    public func start() throws -> URL {
        try running.withLock { current in
            if current != nil { throw CertificateProviderError.invalidParameter("the emulator is already running") }
            // One emulator serves a state directory at a time (until stop()).
            try store.stateFile?.acquireLock()
            var listening = false
            defer { if !listening { store.stateFile?.releaseLock() } }
            stopping.store(false, ordering: .sequentiallyConsistent)
            let limits = MicroHTTPServer.Limits(
                maxBodyBytes: configuration.maxBodyBytes,
                connectionMemoryLimit: configuration.connectionMemoryLimit,
                connectionTimeoutSeconds: configuration.connectionTimeoutSeconds,
                connectionLimit: configuration.connectionLimit
            )
            let server = MicroHTTPServer(limits: limits, tls: try tlsMaterial()) { [weak self] request in
                self?.respond(to: request)
            }
            let port = try bind(server)
            let host =
                configuration.host.contains(":")
                ? "[\(configuration.host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")))]"
                : configuration.host
            guard let url = URL(string: "\(configuration.tls == nil ? "http" : "https")://\(host):\(port)/") else {
                server.stop()
                throw CertificateProviderError.invalidParameter(
                    "the emulator host '\(configuration.host)' does not make a URL"
                )
            }
            do {
                try started(at: url, port: port)
            } catch {
                server.stop()
                throw error
            }
            current = (server, url)
            listening = true
            return url
        }
    }

    /// The PEM the TLS daemon needs, from ``Configuration/tls``; nil for plain HTTP.
    private func tlsMaterial() throws -> MicroHTTPServer.TLSMaterial? {
        guard let tls = configuration.tls else { return nil }
        guard let identity = tls.serverIdentity ?? store.seed.tlsServerIdentity else {
            throw CertificateProviderError.invalidParameter(
                "HTTPS needs a server identity: set Configuration.TLS.serverIdentity or the seed's tlsServerIdentity"
            )
        }
        guard let key = identity.key as? LocalSigningKey else {
            throw CertificateProviderError.invalidParameter("the emulator's TLS server key must be a local key")
        }
        let chain = ([identity.certificate] + identity.chain).map(\.pemRepresentation).joined()
        let trust =
            tls.clientCertificateAuthorities.isEmpty
            ? nil : tls.clientCertificateAuthorities.map(\.pemRepresentation).joined()
        return MicroHTTPServer.TLSMaterial(
            keyPEM: Secret(try key.pemRepresentation(password: nil)),
            certificateChainPEM: chain,
            clientTrustPEM: trust
        )
    }

    /// Stops listening, closes every connection and waits for in-flight requests (a pending
    /// `delay` fault is cut short). Does nothing when not running.
    public func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        let server = running.withLock { current -> MicroHTTPServer? in
            defer { current = nil }
            return current?.server
        }
        server?.stop()
        store.stateFile?.releaseLock()
    }

    /// The base URL while running, else nil.
    public var baseURL: URL? { running.withLock { $0?.url } }

    /// The requests received so far, oldest first (at most ``Configuration/requestLogLimit``).
    public var receivedRequests: [ReceivedRequest] { log.withLock { $0 } }

    /// Forgets the received requests.
    public func clearReceivedRequests() { log.withLock { $0.removeAll() } }

    /// The CA that issued every user certificate, as PEM (to verify signatures with
    /// `openssl cms -verify -CAfile`).
    public var certificateAuthorityPEM: String { store.seed.certificateAuthority.pemRepresentation }

    /// Expires every access token now; refresh tokens keep working (tests the refresh path).
    public func expireAccessTokens() { store.expireAccessTokens() }

    /// Revokes every access and refresh token (tests the re-authentication path).
    public func revokeAllTokens() { store.revokeAllTokens() }

    /// The ids of every stored signature, all users, ascending.
    public var storedSignatureIDs: [Int] { store.allSignatureIDs() }

    /// Handles one request in-process, without a socket: the same fault handling, routing and
    /// handlers a request over HTTP gets (for the fuzz harness, `Tests/Fuzz`). A body longer than
    /// ``Configuration/maxBodyBytes`` is cut and flagged as the server does.
    /// - Returns: the response, or nil when the server would drop the connection.
    package func handle(
        method: String,
        path: String,
        headers: [(name: String, value: String)],
        body: [UInt8]
    ) -> (status: Int, headers: [(name: String, value: String)], body: [UInt8])? {
        let request = ServerRequest(
            method: method,
            path: path,
            headers: headers,
            body: Array(body.prefix(configuration.maxBodyBytes)),
            bodyTooLarge: body.count > configuration.maxBodyBytes
        )
        return respond(to: request).map { ($0.status, $0.headers, $0.body) }
    }

    // MARK: Request handling (on libmicrohttpd's connection threads)

    /// Every API the emulator serves, in the order they claim paths.
    private func routers() -> [any EmulatorRouter] {
        [
            CSCRouter(
                store: store,
                configuration: configuration,
                sads: cscSADs,
                approvals: approvals,
                baseURL: baseURL
            ),
            ApprovalAdminRouter(approvals: approvals, configuration: configuration),
            CryptoProRouter(store: store, configuration: configuration, approvals: approvals),
            TSARouter(pki: pki, configuration: configuration) { self.stopping.load(ordering: .sequentiallyConsistent) },
            RevocationRouter(pki: pki),
            FMPRouter(store: store, configuration: configuration, signer: signer),
        ]
    }

    private func respond(to request: ServerRequest) -> ServerResponse? {
        record(request)
        let router = routers().first { $0.owns(request.path) }
        func error(_ status: Int, _ code: String, _ message: String) -> ServerResponse {
            router?.error(status, code: code, message) ?? Reply.error(status, code, message)
        }
        var fault: Fault?
        if configuration.faultsEnabled, let value = request.header(Fault.headerName) {
            guard let parsed = Fault(headerValue: value) else {
                return error(
                    400,
                    "unknown_fault",
                    "\(Fault.headerName) '\(value)' names no fault (status-500, malformed-json, delay=<ms>, drop, "
                        + "expired-token, large-body=<bytes>, sad-expired, wrong-hash)"
                )
            }
            fault = parsed
        }
        switch fault {
        case .drop?:
            return nil
        case .status500?:
            return error(500, "internal_error", "simulated server failure (\(Fault.headerName): status-500)")
        case .malformedJSON?:
            return ServerResponse(
                status: 200,
                headers: [("Content-Type", "application/json")],
                body: Array("{\"status\": \"ok\", \"result\": {\"raw\": [".utf8)
            )
        case .largeBody(let bytes)?:
            var body = Array("{\"padding\":\"".utf8)
            body += [UInt8](repeating: UInt8(ascii: "x"), count: max(0, bytes - body.count - 2))
            body += Array("\"}".utf8)
            return ServerResponse(status: 200, headers: [("Content-Type", "application/json")], body: body)
        case .delay(let milliseconds)?:
            pause(milliseconds: min(milliseconds, configuration.maxFaultDelayMilliseconds))
        case .expiredToken?, .sadExpired?, .wrongHash?, nil:
            break
        }
        guard let router else { return Reply.error(404, "not_found", "no route for \(request.path)") }
        return router.handle(request, fault: fault)
    }

    private func record(_ request: ServerRequest) {
        guard configuration.requestLogLimit > 0 else { return }
        var headers = request.headers
        var body = request.body
        if !configuration.requestLogKeepsSecrets {
            body = DSSEmulator.redactingSecrets(body, contentType: request.header("Content-Type"))
            headers = headers.map { header in
                // HTTP Basic carries a confidential client's secret; bearer tokens are kept for tests.
                let isBasic =
                    header.name.caseInsensitiveCompare("Authorization") == .orderedSame
                    && header.value.lowercased().hasPrefix("basic ")
                return isBasic ? (header.name, "Basic \(DSSEmulator.redactedValue)") : header
            }
        }
        let entry = ReceivedRequest(
            method: request.method,
            path: request.path,
            headers: headers,
            body: body,
            receivedAt: Date()
        )
        log.withLock { log in
            log.append(entry)
            if log.count > configuration.requestLogLimit { log.removeFirst(log.count - configuration.requestLogLimit) }
        }
    }

    // MARK: Request log redaction

    /// What replaces a secret's value in ``receivedRequests``.
    public static let redactedValue = "REDACTED"

    /// The form fields and JSON members whose values are secrets (platform and DSS passwords,
    /// certificate PINs, OAuth client secrets) in both APIs.
    static let secretFieldNames: Set<String> = ["password", "certificate_pin", "PinCode", "pin", "client_secret"]

    /// The body with every secret field's value replaced by ``redactedValue``: form bodies field by
    /// field, JSON bodies member by member at any depth; other bodies are kept as they are.
    static func redactingSecrets(_ body: [UInt8], contentType: String?) -> [UInt8] {
        guard !body.isEmpty else { return body }
        let type = (contentType ?? "").lowercased()
        if type.hasPrefix("application/x-www-form-urlencoded") {
            let fields = body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false).map {
                field -> [UInt8] in
                guard let equals = field.firstIndex(of: UInt8(ascii: "=")) else { return Array(field) }
                let name = String(decoding: field[..<equals], as: UTF8.self)
                let decoded = name.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? name
                return secretFieldNames.contains(decoded)
                    ? Array(field[...equals]) + Array(redactedValue.utf8) : Array(field)
            }
            return Array(fields.joined(separator: [UInt8(ascii: "&")]))
        }
        guard let json = try? JSONValue(parsing: body) else { return body }
        var redacted = false
        func redact(_ value: JSONValue) -> JSONValue {
            switch value {
            case .object(let members):
                var result: [String: JSONValue] = [:]
                for (key, member) in members {
                    if key == "authData", case .array(let entries) = member {
                        // CSC authData: [{"id": "PIN" | "OTP", "value": secret}]
                        result[key] = .array(
                            entries.map { entry in
                                guard case .object(var fields) = entry, fields["value"] != nil else { return entry }
                                fields["value"] = .string(redactedValue)
                                redacted = true
                                return .object(fields)
                            }
                        )
                    } else if secretFieldNames.contains(key) {
                        result[key] = .string(redactedValue)
                        redacted = true
                    } else {
                        result[key] = redact(member)
                    }
                }
                return .object(result)
            case .array(let elements):
                return .array(elements.map(redact))
            default:
                return value
            }
        }
        let result = redact(json)
        guard redacted else { return body }
        // A body that parsed as JSON encodes again; keep nothing of it if it somehow does not.
        return (try? result.jsonBytes()) ?? Array("{}".utf8)
    }

    /// Sleeps in small steps so `stop()` is not held up by a long delay fault.
    private func pause(milliseconds: Int) {
        let deadline = Date().addingTimeInterval(Double(milliseconds) / 1000)
        while Date() < deadline, !stopping.load(ordering: .sequentiallyConsistent) {
            usleep(10_000)
        }
    }
}
