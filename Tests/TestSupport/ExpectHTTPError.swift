public import HTTPClient
public import Testing

/// Expects `body` (a transport's request, its set-up) to throw an `HTTPClientError` with `code`;
/// records an issue (at the caller's line) when it succeeds or throws anything else.
/// - Returns: the error, for further checks of its reason; nil after a recorded issue.
@discardableResult
public func expectHTTPError<R>(
    _ code: HTTPClientError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async -> HTTPClientError? {
    let outcome: Result<R, any Error>
    do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
    return judge(outcome, expecting: [code], as: HTTPClientError.self, sourceLocation: sourceLocation)
}

/// The synchronous form of `expectHTTPError(_:sourceLocation:_:)`.
@discardableResult
public func expectHTTPError<R>(
    _ code: HTTPClientError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
) -> HTTPClientError? {
    judge(Result { try body() }, expecting: [code], as: HTTPClientError.self, sourceLocation: sourceLocation)
}
