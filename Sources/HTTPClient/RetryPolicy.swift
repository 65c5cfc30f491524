public import Foundation

/// When to send a request again after it failed, and how long to wait in between.
///
/// Only methods that are safe to repeat (``HTTPMethod/isSafeToRetry``: `GET`, `HEAD`) are ever
/// retried. A `POST` (a sign request) is sent exactly once whatever happens, because the server may
/// have acted on it before the failure. Retried failures: `.network` errors (connection refused,
/// reset, dropped) and the statuses in ``retryableStatuses`` (502, 503, 504 by default). Timeouts are
/// not retried by default, so a call fails within its configured timeout. A client whose `POST` has
/// no effect on the server (a Vault transit sign) says so with ``send(_:over:repeatable:)``.
public struct RetryPolicy: Sendable, Equatable {
    /// The most attempts in total, first included (default 3; 1 disables retries).
    public var maxAttempts: Int
    /// The wait before the second attempt (default 0.1 s).
    public var initialBackoff: TimeInterval
    /// The factor applied to the wait after each attempt (default 2).
    public var backoffMultiplier: Double
    /// The longest wait between two attempts (default 2 s).
    public var maxBackoff: TimeInterval
    /// HTTP statuses that count as a transient failure (default 502, 503, 504).
    public var retryableStatuses: Set<Int>
    /// Whether a `.timeout` is retried too (default false).
    public var retriesTimeouts: Bool
    /// The share of each wait drawn at random, 0 to 1 (default 0: exact waits): with 0.5 a wait of
    /// 1 s becomes a random 0.5 to 1 s, so clients throttled together do not come back together.
    public var jitter: Double

    /// Creates a policy; every parameter documents its default above.
    public init(
        maxAttempts: Int = 3,
        initialBackoff: TimeInterval = 0.1,
        backoffMultiplier: Double = 2,
        maxBackoff: TimeInterval = 2,
        retryableStatuses: Set<Int> = [502, 503, 504],
        retriesTimeouts: Bool = false,
        jitter: Double = 0
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialBackoff = max(0, initialBackoff)
        self.backoffMultiplier = max(1, backoffMultiplier)
        self.maxBackoff = max(0, maxBackoff)
        self.retryableStatuses = retryableStatuses
        self.retriesTimeouts = retriesTimeouts
        self.jitter = min(1, max(0, jitter))
    }

    /// Three attempts for safe methods, 0.1 s then 0.2 s apart.
    public static let `default` = RetryPolicy()
    /// Never retry.
    public static let never = RetryPolicy(maxAttempts: 1)

    /// The longest wait before attempt number `attempt` (2 is the first retry); with ``jitter`` the
    /// actual wait is drawn between `(1 - jitter)` times this and this.
    public func backoff(beforeAttempt attempt: Int) -> TimeInterval {
        guard attempt > 1 else { return 0 }
        return min(maxBackoff, initialBackoff * pow(backoffMultiplier, Double(attempt - 2)))
    }

    /// Sends `request` over `transport`, retrying as this policy allows.
    ///
    /// - Returns: the first response that is not a retryable status, or the last response.
    /// - Throws: the last transport error; `.cancelled` when the task is cancelled while waiting.
    public func send(_ request: HTTPRequest, over transport: any HTTPTransport) async throws -> HTTPResponse {
        try await send(request, over: transport, repeatable: request.method.isSafeToRetry)
    }

    /// Sends `request` over `transport`, retrying as this policy allows when `repeatable` says that
    /// sending it twice does no harm whatever its method (a sign request that changes nothing on the
    /// server); a request that is not repeatable is sent once.
    ///
    /// - Returns: the first response that is not a retryable status, or the last response.
    /// - Throws: the last transport error; `.cancelled` when the task is cancelled while waiting.
    public func send(
        _ request: HTTPRequest,
        over transport: any HTTPTransport,
        repeatable: Bool
    ) async throws -> HTTPResponse {
        let attempts = repeatable ? maxAttempts : 1
        var attempt = 1
        while true {
            do {
                let response = try await transport.send(request)
                if attempt < attempts, retryableStatuses.contains(response.status) {
                    attempt += 1
                    try await wait(beforeAttempt: attempt)
                    continue
                }
                return response
            } catch let error as HTTPClientError {
                let transient = error.code == .network || (retriesTimeouts && error.code == .timeout)
                guard transient, attempt < attempts else { throw error }
                attempt += 1
                try await wait(beforeAttempt: attempt)
            }
        }
    }

    private func wait(beforeAttempt attempt: Int) async throws {
        let longest = backoff(beforeAttempt: attempt)
        let seconds = jitter > 0 ? longest * Double.random(in: (1 - jitter)...1) : longest
        do {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
        } catch {
            throw HTTPClientError(.cancelled, "the request was cancelled while waiting to retry")
        }
    }
}
