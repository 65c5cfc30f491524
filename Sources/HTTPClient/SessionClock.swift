public import Foundation

/// Where a remote client reads the current time when it decides whether an access token is still
/// good: when a token was issued (its expiry is that time plus the server's `expires_in`) and
/// whether it has more than the renewal margin left.
///
/// ``system`` reads the wall clock. A test passes its own clock to look at a token at a chosen
/// moment of its life, so that no expectation depends on how fast the machine runs the test:
///
/// ```swift
/// let later = SessionClock { Date().addingTimeInterval(580) }
/// ```
public struct SessionClock: Sendable {
    private let read: @Sendable () -> Date

    /// Creates a clock that answers `now` with what `read` returns.
    /// - Parameter read: called each time the client needs the time; it must be cheap and not block.
    public init(_ read: @escaping @Sendable () -> Date) {
        self.read = read
    }

    /// The wall clock (`Date()`).
    public static let system = SessionClock { Date() }

    /// The current time by this clock.
    public var now: Date { read() }
}
