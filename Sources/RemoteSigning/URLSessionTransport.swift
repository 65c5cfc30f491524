import CertificateProviders
import Foundation
#if canImport(FoundationNetworking)
internal import FoundationNetworking
#endif
import Synchronization

/// The package's ``HTTPTransport``: `URLSession` (FoundationNetworking, libcurl on Linux).
///
/// - Every request is checked against ``Configuration/endpointPolicy`` first (`http://` only to
///   loopback unless allowed).
/// - TLS is verified against the system trust store (on Debian `/etc/ssl/certs/ca-certificates.crt`).
/// - Each request has a hard deadline of ``HTTPRequest/timeout`` seconds for the whole exchange;
///   when it passes the transfer is cancelled and `.timeout` is thrown.
/// - Connection failures (refused, reset, dropped, DNS, TLS) throw `.network`; task cancellation
///   throws `.cancelled`. Redirects are not followed: a 3xx is returned as the response.
///
/// Trusting an extra CA file: on Linux, swift-corelibs-foundation's `URLSession` does not deliver
/// server-trust authentication challenges to delegates and sets libcurl's CA file itself (the
/// `URLSessionCertificateAuthorityInfoFile` variable is read on Android only), so a per-session CA
/// cannot be added. ``Configuration/trustedCAFile`` is therefore refused with
/// `.unsupportedOperation` on Linux; install the CA into the system store
/// (`/usr/local/share/ca-certificates/*.crt` + `update-ca-certificates`) or bring an
/// ``HTTPTransport`` of your own.
///
/// IPv6 literal hosts (`http://[::1]:8080/`): FoundationNetworking on Linux refuses them with URL
/// error -1000 ("URLSession and curl did not agree on URL host"), reported as `.network`; use a
/// host name or an IPv4 address.
public final class URLSessionTransport: HTTPTransport {
    /// How the transport behaves; every field documents its default.
    public struct Configuration: Sendable {
        /// Which URLs may be requested (default: HTTPS anywhere, HTTP to loopback only).
        public var endpointPolicy: RemoteEndpointPolicy
        /// A PEM file of extra CA certificates to trust besides the system store (default nil).
        /// Not supported by FoundationNetworking on Linux: see the type's documentation.
        public var trustedCAFile: String?
        /// The most connections kept open to one host, per session (default 8).
        public var maximumConnectionsPerHost: Int
        /// How many `URLSession`s requests are spread over, round robin (default: the number of
        /// cores, at most 4). FoundationNetworking runs each session's transfers on one serial
        /// queue, so one session caps concurrent throughput at one core.
        public var sessionCount: Int

        /// Creates a configuration.
        public init(endpointPolicy: RemoteEndpointPolicy = .default, trustedCAFile: String? = nil, maximumConnectionsPerHost: Int = 8,
                    sessionCount: Int = min(4, max(1, ProcessInfo.processInfo.activeProcessorCount))) {
            self.endpointPolicy = endpointPolicy
            self.trustedCAFile = trustedCAFile
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.sessionCount = max(1, sessionCount)
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    private let sessions: [URLSession]
    private let nextSession = Atomic<Int>(0)
    private let redirectBlocker = RedirectBlocker()

    /// Creates a transport with the default configuration.
    public convenience init() {
        // The default configuration has no trustedCAFile, the only thing init(configuration:) rejects.
        try! self.init(configuration: Configuration())
    }

    /// Creates a transport.
    /// - Throws: `.unsupportedOperation` when ``Configuration/trustedCAFile`` is set on a platform
    ///   whose URLSession cannot honour it (Linux); `.fileSystem` when the file is unreadable.
    public init(configuration: Configuration) throws {
        if let file = configuration.trustedCAFile {
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw CertificateProviderError(.fileSystem, "the trusted CA file '\(file)' cannot be read")
            }
            #if canImport(FoundationNetworking)
            throw CertificateProviderError.unsupportedOperation(
                "URLSession on Linux cannot trust an extra CA file per session; add the CA to the system store (/usr/local/share/ca-certificates, update-ca-certificates) or pass your own HTTPTransport")
            #endif
        }
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.httpMaximumConnectionsPerHost = max(1, configuration.maximumConnectionsPerHost)
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpCookieAcceptPolicy = .never
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let blocker = redirectBlocker
        sessions = (0..<configuration.sessionCount).map { _ in
            URLSession(configuration: sessionConfiguration, delegate: blocker, delegateQueue: nil)
        }
    }

    deinit {
        for session in sessions { session.invalidateAndCancel() }
    }

    /// The request body as the `Data` handed to `URLRequest.httpBody`. A function of its own so that
    /// the LeakSanitizer suppression in `.asan/lsan.supp` names exactly this allocation:
    /// FoundationNetworking never releases some upload bodies it is given (our reference ends with `send`).
    @inline(never)
    static func uploadBody(_ bytes: [UInt8]) -> Data { Data(bytes) }

    /// Sends one request (see the type's documentation for the error contract).
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try configuration.endpointPolicy.validate(request.url)
        if Task.isCancelled { throw CertificateProviderError(.cancelled, "the request was cancelled before it was sent") }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.timeoutInterval = max(0.001, request.timeout)
        for header in request.headers { urlRequest.addValue(header.value, forHTTPHeaderField: header.name) }
        if !request.body.isEmpty { urlRequest.httpBody = URLSessionTransport.uploadBody(request.body) }

        let outcome = Outcome()
        let description = "\(request.method) \(request.url.host ?? "")\(request.url.path)"
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let index = nextSession.wrappingAdd(1, ordering: .relaxed).oldValue
                let session = sessions[(index % sessions.count + sessions.count) % sessions.count]
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        outcome.finish(continuation, .failure(URLSessionTransport.map(error, description: description, timeout: request.timeout)))
                    } else if let http = response as? HTTPURLResponse {
                        let headers = http.allHeaderFields.compactMap { key, value -> (name: String, value: String)? in
                            guard let name = key as? String else { return nil }
                            return (name, "\(value)")
                        }
                        outcome.finish(continuation, .success(HTTPResponse(status: http.statusCode, headers: headers, body: Array(data ?? Data()))))
                    } else {
                        outcome.finish(continuation, .failure(CertificateProviderError(.network, "\(description): the answer is not an HTTP response")))
                    }
                }
                outcome.attach(task)
                let deadline = DispatchTime.now() + .nanoseconds(Int(max(0.001, request.timeout) * 1e9))
                DispatchQueue.global().asyncAfter(deadline: deadline) {
                    let error = CertificateProviderError(.timeout, "\(description): no complete answer within \(URLSessionTransport.format(request.timeout)) s")
                    if outcome.finish(continuation, .failure(error)) { task.cancel() }
                }
                task.resume()
            }
        } onCancel: {
            outcome.cancel()
        }
    }

    static func format(_ seconds: TimeInterval) -> String { String(format: "%g", seconds) }

    static func map(_ error: any Error, description: String, timeout: TimeInterval) -> CertificateProviderError {
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain else {
            return CertificateProviderError(.network, "\(description): \(nsError.localizedDescription)")
        }
        switch nsError.code {
        case NSURLErrorTimedOut:
            return CertificateProviderError(.timeout, "\(description): no complete answer within \(format(timeout)) s")
        case NSURLErrorCancelled:
            return CertificateProviderError(.cancelled, "\(description): the request was cancelled")
        case NSURLErrorCannotConnectToHost:
            return CertificateProviderError(.network, "\(description): the connection was refused; is the server running?")
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed:
            return CertificateProviderError(.network, "\(description): the host name cannot be resolved")
        case NSURLErrorNetworkConnectionLost, NSURLErrorBadServerResponse, NSURLErrorZeroByteResource:
            return CertificateProviderError(.network, "\(description): the server closed the connection without a complete answer")
        case NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasBadDate,
             NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateNotYetValid, NSURLErrorClientCertificateRejected:
            return CertificateProviderError(.network, "\(description): the TLS connection failed (the server certificate is not trusted or the handshake failed)")
        default:
            return CertificateProviderError(.network, "\(description): \(nsError.localizedDescription) (URL error \(nsError.code))")
        }
    }
}

/// Resumes a continuation exactly once, whoever comes first: the transfer, the deadline, or a cancel.
private final class Outcome: Sendable {
    private struct State {
        var finished = false
        var cancelRequested = false
        var task: URLSessionDataTask?
    }
    // URLSessionDataTask is thread-safe for cancel(); it is only stored and cancelled here.
    private let state = Mutex(UncheckedBox(State()))

    func attach(_ task: URLSessionDataTask) {
        let cancelNow = state.withLock { box -> Bool in
            box.value.task = task
            return box.value.cancelRequested
        }
        if cancelNow { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { box -> URLSessionDataTask? in
            box.value.cancelRequested = true
            return box.value.task
        }
        task?.cancel()
    }

    /// Returns true when this call resumed the continuation.
    @discardableResult
    func finish(_ continuation: CheckedContinuation<HTTPResponse, any Error>, _ result: Result<HTTPResponse, CertificateProviderError>) -> Bool {
        let first = state.withLock { box -> Bool in
            guard !box.value.finished else { return false }
            box.value.finished = true
            return true
        }
        if first { continuation.resume(with: result.mapError { $0 as any Error }) }
        return first
    }
}

/// A box that lets a non-Sendable value live inside a Mutex; every access goes through the lock.
private struct UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// Stops URLSession from following redirects, so a 3xx (and its Location) reaches the caller and a
/// POST body is never replayed to another URL.
private final class RedirectBlocker: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
