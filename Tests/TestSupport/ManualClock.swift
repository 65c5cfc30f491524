public import Foundation
public import HTTPClient
import Synchronization

/// A clock a test moves by hand, so that what a client decides about a token's age depends on the
/// moment the test chose, never on how fast the machine ran the test.
public final class ManualClock: Sendable {
    private let current: Mutex<Date>

    /// A clock standing at `start` (default: the wall clock's now) until moved.
    public init(_ start: Date = Date()) {
        current = Mutex(start)
    }

    /// The time it shows.
    public var now: Date { current.withLock { $0 } }

    /// The clock a client or provider reads it through.
    public var sessionClock: SessionClock {
        SessionClock { [self] in now }
    }

    /// Moves the clock `seconds` forward (backward when negative).
    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// Sets the clock to `date`.
    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }
}
