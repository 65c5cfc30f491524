internal import CCurl
internal import CCurlShims
import Foundation
import Synchronization

/// The package's default ``HTTPTransport``: libcurl (the OpenSSL build) driven by one multi handle:
/// the calling thread starts its request without blocking, and a dedicated thread waits for the
/// answers, so no cooperative thread ever blocks on the network.
///
/// - Connections are kept alive and reused (the multi handle's connection cache), at most
///   ``Configuration/maximumConnectionsPerHost`` to one host; HTTP/2 is used when an HTTPS server
///   offers it (ALPN), HTTP/1.1 otherwise.
/// - Every request is checked against ``Configuration/endpointPolicy`` first (`http://` only to
///   loopback unless allowed); only `http` and `https` are spoken.
/// - TLS: 1.2 at least; the server certificate is verified, host name included, always. Trust is
///   the system store (Debian: `/etc/ssl/certs/ca-certificates.crt`) plus
///   ``Configuration/trustedCAFile`` when given, or that file alone when
///   ``Configuration/trustedCAFileReplacesSystemStore`` is set.
/// - ``Configuration/clientIdentity`` (a ``TLSClientIdentity``, made from any `SigningIdentity`
///   whose key this process holds: a stored identity, a PKCS#12 file) is presented when the server
///   asks for a client certificate.
/// - Each request has a hard deadline of ``HTTPRequest/timeout`` seconds for the whole exchange
///   (connect and TLS handshake included). Task cancellation aborts the transfer at once.
/// - Redirects are never followed: a 3xx reaches the caller, so neither a body nor a bearer token
///   is ever replayed to another URL.
/// - Response bodies over ``Configuration/maximumResponseBodyBytes`` are refused with
///   `.responseTooLarge` (as soon as `Content-Length` announces them, or when the bytes pass the limit).
/// - Proxies come from the environment as for the `curl` tool: `https_proxy`/`HTTPS_PROXY`,
///   `http_proxy` (lower case only), `all_proxy`/`ALL_PROXY`, `no_proxy`/`NO_PROXY`. When none of
///   the proxy variables is set as the transport is made, it uses no proxy for its whole life.
/// - IPv6 literal hosts work (`https://[::1]:8443/`).
///
/// Errors (see ``HTTPTransport``): `.untrustedServerCertificate` names the server certificate's
/// subject and issuer and why it is not trusted, `.serverHostnameMismatch` the host, and
/// `.clientCertificateRejected` whether a client certificate was sent; a handshake that does not
/// finish in time is a `.timeout` saying so.
public final class CurlTransport: HTTPTransport {
    /// How the transport behaves; every field documents its default.
    public struct Configuration: Sendable {
        /// Which URLs may be requested (default: HTTPS anywhere, HTTP to loopback only).
        public var endpointPolicy: RemoteEndpointPolicy
        /// A PEM file of CA certificates to trust for servers (default nil: the system store only).
        /// Read once, when the transport is made.
        public var trustedCAFile: String?
        /// Whether ``trustedCAFile`` replaces the system store instead of being added to it (default
        /// false: added, so public servers stay reachable; set it to pin a private CA).
        public var trustedCAFileReplacesSystemStore: Bool
        /// The identity presented when a server asks for a TLS client certificate (default nil: none).
        /// Its chain is sent after the certificate.
        public var clientIdentity: TLSClientIdentity?
        /// The largest response body accepted, in bytes (default 16 MiB).
        public var maximumResponseBodyBytes: Int
        /// The most connections open to one host at a time; more requests wait for one (default 8).
        public var maximumConnectionsPerHost: Int

        /// Creates a configuration.
        public init(
            endpointPolicy: RemoteEndpointPolicy = .default,
            trustedCAFile: String? = nil,
            trustedCAFileReplacesSystemStore: Bool = false,
            clientIdentity: TLSClientIdentity? = nil,
            maximumResponseBodyBytes: Int = 16 << 20,
            maximumConnectionsPerHost: Int = 8
        ) {
            self.endpointPolicy = endpointPolicy
            self.trustedCAFile = trustedCAFile
            self.trustedCAFileReplacesSystemStore = trustedCAFileReplacesSystemStore
            self.clientIdentity = clientIdentity
            self.maximumResponseBodyBytes = max(0, maximumResponseBodyBytes)
            self.maximumConnectionsPerHost = max(1, maximumConnectionsPerHost)
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    private let loop: CurlMultiLoop
    private let tls: CurlTLSSetup
    private let loopExecutor: CurlLoopExecutor
    /// URLs (absolute strings) that passed ``Configuration/endpointPolicy`` (at most
    /// ``validatedURLLimit``; forgotten all at once when full).
    private let validatedURLs = Mutex<Set<String>>([])
    private static let validatedURLLimit = 256
    /// Whether a proxy variable curl reads was set (non-empty) when the transport was made.
    private let proxyFromEnvironment: Bool

    /// The executor of the thread that waits for this transport's sockets. A task that prefers it
    /// (`withTaskExecutorPreference(transport.taskExecutor) { … }`, around a whole series of client
    /// calls) sends its requests and continues with the answers on that thread, so a round trip
    /// costs no hand-over between threads (one context switch fewer per request; the clients'
    /// actors run there too). Work done there delays other transfers of this transport: keep
    /// long computations (signing, large parses) elsewhere. Keep the transport alive while tasks
    /// prefer its executor.
    ///
    /// By default nothing runs there: a caller's tasks stay on the shared cooperative pool, and the
    /// clients (`FMPClient`, `CryptoProDSSClient`, `CSCClient`) do not move their operations there
    /// by themselves. Each round trip then costs two thread wake-ups (this thread for the answer,
    /// a pool thread for the caller). Moving each operation there alone would cost three for a
    /// one-request operation (a hop in, the answer, a hop back out; measured 3.1 against 2.0 context
    /// switches per request, and no less CPU), so the hop pays only for a series of calls, which
    /// the caller opts into as above (1.0 context switch per request).
    public var taskExecutor: any TaskExecutor { loopExecutor }

    /// Creates a transport with the default configuration (system trust store, no client certificate).
    public convenience init() {
        self.init(configuration: Configuration(), tls: CurlTLSSetup())
    }

    /// Creates a transport that trusts the system store and presents no client certificate: it reads
    /// no file and opens no key, so, unlike ``init(configuration:)``, it cannot fail.
    /// - Parameters:
    ///   - endpointPolicy: which URLs may be reached (``Configuration/endpointPolicy``).
    ///   - maximumResponseBodyBytes: the largest response body accepted (default 16 MiB).
    public convenience init(endpointPolicy: RemoteEndpointPolicy, maximumResponseBodyBytes: Int = 16 << 20) {
        self.init(
            configuration: Configuration(
                endpointPolicy: endpointPolicy,
                maximumResponseBodyBytes: maximumResponseBodyBytes
            ),
            tls: CurlTLSSetup()
        )
    }

    /// Creates a transport.
    /// - Throws: `.fileSystem` when ``Configuration/trustedCAFile`` cannot be read;
    ///   `.malformedInput` when it holds no PEM certificate; `.invalidParameter` when the client
    ///   identity's key is not a local key (a key held by a server or token cannot do TLS here).
    public convenience init(configuration: Configuration) throws {
        self.init(configuration: configuration, tls: try CurlTLSSetup(configuration: configuration))
    }

    private init(configuration: Configuration, tls: CurlTLSSetup) {
        self.configuration = configuration
        self.tls = tls
        loop = CurlMultiLoop(maximumConnectionsPerHost: configuration.maximumConnectionsPerHost)
        loopExecutor = CurlLoopExecutor(loop: loop)
        let environment = ProcessInfo.processInfo.environment
        proxyFromEnvironment = ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"].contains {
            !(environment[$0] ?? "").isEmpty
        }
    }

    deinit { loop.shutdown() }

    /// Sends one request (see the type's documentation for the error contract).
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let urlString = request.url.absoluteString
        try validate(request.url, urlString)
        if Task.isCancelled {
            throw HTTPClientError(.cancelled, "the request was cancelled before it was sent")
        }
        let transfer = try CurlTransfer(
            request: request,
            urlString: urlString,
            configuration: configuration,
            tls: tls,
            proxyFromEnvironment: proxyFromEnvironment,
            pool: loop
        )
        return try await withTaskCancellationHandler {
            // Resumed exactly once: by the loop when the transfer finishes, fails or is cancelled.
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<HTTPResponse, any Error>) in
                transfer.continuation = continuation
                loop.submit(transfer)
            }
        } onCancel: {
            loop.cancel(transfer)
        }
    }

    /// Checks the URL against ``Configuration/endpointPolicy`` once per distinct URL: the verdict
    /// depends on the URL alone, and clients send the same few routes over and over.
    private func validate(_ url: URL, _ urlString: String) throws {
        if validatedURLs.withLock({ $0.contains(urlString) }) { return }
        try configuration.endpointPolicy.validate(url)
        validatedURLs.withLock { known in
            if known.count >= CurlTransport.validatedURLLimit { known.removeAll() }
            known.insert(urlString)
        }
    }
}
