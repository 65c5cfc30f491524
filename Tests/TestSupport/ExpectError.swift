public import CertificateProviders
public import CodedErrors
public import Testing

/// Expects `body` to throw an `E` (a `CertificateProviderError` unless `type` says another coded
/// error, e.g. `HTTPClientError.self`) with `code`; records an issue (at the caller's line) when it
/// succeeds or throws anything else.
/// - Returns: the error, for further checks of its reason or hint; nil after a recorded issue.
@discardableResult
public func expectError<E: CodedError, R>(
    _ code: E.Code,
    as type: E.Type = CertificateProviderError.self,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async -> E? {
    let outcome: Result<R, any Error>
    do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
    return judge(outcome, expecting: [code], as: type, sourceLocation: sourceLocation)
}

/// The synchronous form of `expectError(_:as:sourceLocation:_:)`, for synchronous tests.
@discardableResult
public func expectError<E: CodedError, R>(
    _ code: E.Code,
    as type: E.Type = CertificateProviderError.self,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
) -> E? {
    judge(Result { try body() }, expecting: [code], as: type, sourceLocation: sourceLocation)
}

/// Expects `body` to throw a `CertificateProviderError` whose code is one of `codes` (where either
/// answer is right, e.g. a damaged file read as malformed or as a wrong password).
@discardableResult
public func expectError<R>(
    oneOf codes: Set<CertificateProviderError.Code>,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
) -> CertificateProviderError? {
    judge(Result { try body() }, expecting: codes, sourceLocation: sourceLocation)
}

/// Records an issue unless `outcome` failed with an `E` whose code is one of `codes`.
/// - Returns: that error, for further checks; nil after a recorded issue.
func judge<R, E: CodedError>(
    _ outcome: Result<R, any Error>,
    expecting codes: Set<E.Code>,
    as type: E.Type = CertificateProviderError.self,
    sourceLocation: SourceLocation
) -> E? {
    let code = codes.count == 1 ? "\(codes.first!)" : "one of \(codes.map(\.description).sorted())"
    switch outcome {
    case .success:
        Issue.record("expected \(code), but the call succeeded", sourceLocation: sourceLocation)
    case .failure(let error as E):
        #expect(codes.contains(error.code), "expected \(code), got \(error)", sourceLocation: sourceLocation)
        return error
    case .failure(let error):
        Issue.record("expected \(E.self) \(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
