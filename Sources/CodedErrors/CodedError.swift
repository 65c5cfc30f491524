/// The name of a kind of failure: a stable string (`network`, `wrongPassword`) in an open set that a
/// module extends with static members, so a program switches on it and logs and JSON output carry it.
public protocol ErrorCode: Hashable, Sendable, CustomStringConvertible {
    /// The stable name.
    var rawValue: String { get }
}

extension ErrorCode {
    /// The stable name.
    public var description: String { rawValue }
}

/// The shape every error type of the package shares: a ``code`` a program switches on and a
/// ``reason`` a person can act on. Two errors are equal when their codes are, so callers and tests
/// compare with `error == .init(.network, "")`-style values or match on the code alone.
///
/// The module depends on nothing, so the leaves (the HTTP client, the JSON reader) and the core use
/// one shape without depending on each other.
public protocol CodedError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    associatedtype Code: ErrorCode
    /// What failed.
    var code: Code { get }
    /// A sentence saying what failed and what to do; never a secret.
    var reason: String { get }
}

extension CodedError {
    /// `code: reason`.
    public var description: String { "\(code): \(reason)" }

    /// Errors are equal when their codes are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
}

extension CodedError where Self: Hashable {
    /// Hashes the code (as equality compares it alone).
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
