import CertificateProviders
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
internal import FoundationNetworking
#endif

/// An ``HTTPTransport`` on `URLSession` (FoundationNetworking, libcurl on Linux), kept for apps
/// that want Foundation's networking; the package's default is ``CurlTransport``.
///
/// - Every request is checked against ``Configuration/endpointPolicy`` first (`http://` only to
///   loopback unless allowed).
/// - TLS is verified against the system trust store (on Debian `/etc/ssl/certs/ca-certificates.crt`).
///   A private CA or a TLS client certificate needs ``CurlTransport``: swift-corelibs-foundation's
///   `URLSession` delivers neither server-trust nor client-certificate challenges on Linux.
/// - Each request has a hard deadline of ``HTTPRequest/timeout`` seconds for the whole exchange;
///   when it passes the transfer is cancelled and `.timeout` is thrown.
/// - Response bodies over ``Configuration/maximumResponseBodyBytes`` are refused with
///   `.responseTooLarge`: the transfer is cancelled as soon as `Content-Length` announces more, or
///   when the received bytes pass the limit, so an endless answer cannot fill the memory.
/// - Connection failures (refused, reset, dropped, DNS, TLS) throw `.network`; task cancellation
///   throws `.cancelled`. Redirects are not followed: a 3xx is returned as the response.
///
/// IPv6 literal hosts (`http://[::1]:8080/`): FoundationNetworking on Linux refuses them with URL
/// error -1000 ("URLSession and curl did not agree on URL host"), reported as `.network`; use
/// ``CurlTransport``, a host name or an IPv4 address.
public final class URLSessionTransport: HTTPTransport {
    /// How the transport behaves; every field documents its default.
    public struct Configuration: Sendable {
        /// Which URLs may be requested (default: HTTPS anywhere, HTTP to loopback only).
        public var endpointPolicy: RemoteEndpointPolicy
        /// The most connections kept open to one host, per session (default 8).
        public var maximumConnectionsPerHost: Int
        /// How many `URLSession`s requests are spread over, round robin (default: the number of
        /// cores, at most 4). FoundationNetworking runs each session's transfers on one serial
        /// queue, so one session caps concurrent throughput at one core.
        public var sessionCount: Int
        /// The largest response body accepted, in bytes (default 16 MiB).
        public var maximumResponseBodyBytes: Int

        /// Creates a configuration.
        public init(
            endpointPolicy: RemoteEndpointPolicy = .default,
            maximumConnectionsPerHost: Int = 8,
            sessionCount: Int = min(4, max(1, ProcessInfo.processInfo.activeProcessorCount)),
            maximumResponseBodyBytes: Int = 16 << 20
        ) {
            self.endpointPolicy = endpointPolicy
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.sessionCount = max(1, sessionCount)
            self.maximumResponseBodyBytes = max(0, maximumResponseBodyBytes)
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    private let sessions: [URLSession]
    private let nextSession = Atomic<Int>(0)
    private let delegates: [SessionDelegate]

    /// Creates a transport with the default configuration.
    public convenience init() {
        self.init(configuration: Configuration())
    }

    /// Creates a transport.
    public init(configuration: Configuration) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.httpMaximumConnectionsPerHost = max(1, configuration.maximumConnectionsPerHost)
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpCookieAcceptPolicy = .never
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        delegates = (0..<configuration.sessionCount).map { _ in
            SessionDelegate(limit: configuration.maximumResponseBodyBytes)
        }
        sessions = delegates.map { delegate in
            URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil)
        }
    }

    deinit {
        for session in sessions { session.invalidateAndCancel() }
    }

    /// The request body as the `Data` handed to `URLRequest.httpBody`. A function of its own so that
    /// the LeakSanitizer suppression in `.asan/lsan.supp` names exactly this allocation:
    /// FoundationNetworking never releases some upload bodies it is given (our reference ends with `send`).
    @inline(never)
    static func uploadBody(_ bytes: UnsafeRawBufferPointer) -> Data { Data(bytes) }

    /// Sends one request (see the type's documentation for the error contract).
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try configuration.endpointPolicy.validate(request.url)
        if Task.isCancelled {
            throw CertificateProviderError(.cancelled, "the request was cancelled before it was sent")
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.timeoutInterval = max(0.001, request.timeout)
        for header in request.headers { urlRequest.addValue(header.value, forHTTPHeaderField: header.name) }
        if request.bodyCount > 0 { urlRequest.httpBody = request.withBodyBytes { URLSessionTransport.uploadBody($0) } }

        let outcome = Outcome()
        let description = "\(request.method) \(request.url.host ?? "")\(request.url.path)"
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let index = nextSession.wrappingAdd(1, ordering: .relaxed).oldValue
                let slot = (index % sessions.count + sessions.count) % sessions.count
                let task = sessions[slot].dataTask(with: urlRequest)
                delegates[slot].register(task) { result in
                    switch result {
                    case .failure(let failure as CertificateProviderError):
                        outcome.finish(continuation, .failure(failure))
                    case .failure(let error):
                        outcome.finish(
                            continuation,
                            .failure(URLSessionTransport.map(error, description: description, timeout: request.timeout))
                        )
                    case .success(let (response, data)):
                        guard let http = response as? HTTPURLResponse else {
                            outcome.finish(
                                continuation,
                                .failure(
                                    CertificateProviderError(
                                        .network,
                                        "\(description): the answer is not an HTTP response"
                                    )
                                )
                            )
                            return
                        }
                        let headers = http.allHeaderFields.compactMap { key, value -> (name: String, value: String)? in
                            guard let name = key as? String else { return nil }
                            return (name, "\(value)")
                        }
                        outcome.finish(
                            continuation,
                            .success(HTTPResponse(status: http.statusCode, headers: headers, body: data))
                        )
                    }
                }
                outcome.attach(task)
                let deadline = DispatchTime.now() + .nanoseconds(Int(max(0.001, request.timeout) * 1e9))
                DispatchQueue.global().asyncAfter(deadline: deadline) {
                    let error = CertificateProviderError(
                        .timeout,
                        "\(description): no complete answer within \(URLSessionTransport.format(request.timeout)) s"
                    )
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
            return CertificateProviderError(
                .network,
                "\(description): the connection was refused; is the server running?"
            )
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed:
            return CertificateProviderError(.network, "\(description): the host name cannot be resolved")
        case NSURLErrorNetworkConnectionLost, NSURLErrorBadServerResponse, NSURLErrorZeroByteResource:
            return CertificateProviderError(
                .network,
                "\(description): the server closed the connection without a complete answer"
            )
        case NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateUntrusted,
            NSURLErrorServerCertificateHasBadDate,
            NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateNotYetValid,
            NSURLErrorClientCertificateRejected:
            return CertificateProviderError(
                .network,
                "\(description): the TLS connection failed (the server certificate is not trusted or the handshake "
                    + "failed)"
            )
        default:
            return CertificateProviderError(
                .network,
                "\(description): \(nsError.localizedDescription) (URL error \(nsError.code))"
            )
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
    func finish(
        _ continuation: CheckedContinuation<HTTPResponse, any Error>,
        _ result: Result<HTTPResponse, CertificateProviderError>
    ) -> Bool {
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

/// The delegate of one session: stops redirects (a 3xx and its Location reach the caller, a POST
/// body is never replayed to another URL), collects each task's body up to the limit and cancels the
/// task when the answer is larger, and completes each task's callback once.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    typealias Completion = @Sendable (Result<(URLResponse?, [UInt8]), any Error>) -> Void
    private struct TaskState {
        var completion: Completion
        var body: [UInt8] = []
        var tooLarge = false
    }
    private let limit: Int
    private let tasks = Mutex<[Int: TaskState]>([:])

    init(limit: Int) { self.limit = limit }

    func register(_ task: URLSessionDataTask, completion: @escaping Completion) {
        tasks.withLock { $0[task.taskIdentifier] = TaskState(completion: completion) }
    }

    private func tooLargeError(_ task: URLSessionTask) -> CertificateProviderError {
        let target =
            task.originalRequest.map { "\($0.httpMethod ?? "GET") \($0.url?.host ?? "")\($0.url?.path ?? "")" }
            ?? "the request"
        return CertificateProviderError(
            .responseTooLarge,
            "\(target): the answer is larger than \(limit) bytes (maximumResponseBodyBytes); refused"
        )
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if response.expectedContentLength > Int64(limit) {
            tasks.withLock { $0[dataTask.taskIdentifier]?.tooLarge = true }
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let cancel = tasks.withLock { tasks -> Bool in
            let id = dataTask.taskIdentifier
            guard let tooLarge = tasks[id]?.tooLarge, !tooLarge, let received = tasks[id]?.body.count else {
                return false
            }
            if received + data.count > limit {
                tasks[id]?.tooLarge = true
                tasks[id]?.body = []
                return true
            }
            tasks[id]?.body.append(contentsOf: data)  // in place: no copy of the body so far
            return false
        }
        if cancel { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let state = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if state.tooLarge {
            state.completion(.failure(tooLargeError(task)))
        } else if let error {
            state.completion(.failure(error))
        } else {
            state.completion(.success((task.response, state.body)))
        }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
