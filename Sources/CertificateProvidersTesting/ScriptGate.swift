import Dispatch
import Synchronization

/// A gate a scripted call waits at until the test opens it (``ScriptedCertificateProvider/Behavior/waitFor(_:then:)``):
/// the test decides the moment, so cancellation, timeouts and calls overlapping each other are
/// tested without sleeping.
///
/// ```swift
/// let gate = ScriptGate()
/// provider.script(.initialize, .waitFor(gate, then: .succeed))
/// let call = Task { try await provider.initialize(options: [:]) }
/// await gate.waitForArrivals(1)   // the call is now parked at the gate
/// gate.release()                  // and now it goes on
/// ```
///
/// An asynchronous call waiting at the gate ends with `CancellationError` when its task is
/// cancelled; a synchronous one blocks its thread until the release. Once released the gate stays
/// open: later calls pass straight through.
public final class ScriptGate: Sendable {
    private struct State {
        var released = false
        var arrivals = 0
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var blocked: [DispatchSemaphore] = []
        var arrivalWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    /// A closed gate.
    public init() {}

    /// Whether ``release()`` was called.
    public var isReleased: Bool { state.withLock { $0.released } }

    /// How many calls have reached the gate so far (waiting now or passed after the release).
    public var arrivals: Int { state.withLock { $0.arrivals } }

    /// Opens the gate: every waiting call goes on, and later ones do not wait.
    public func release() {
        let (waiters, blocked) = state.withLock { state in
            state.released = true
            defer {
                state.waiters = [:]
                state.blocked = []
            }
            return (Array(state.waiters.values), state.blocked)
        }
        for waiter in waiters { waiter.resume() }
        for semaphore in blocked { semaphore.signal() }
    }

    /// Returns once at least `count` calls have reached the gate.
    public func waitForArrivals(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if state.arrivals >= count { return true }
                state.arrivalWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Counts an arrival and wakes the tests waiting for that many.
    private func arrive(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        state.arrivals += 1
        let arrivals = state.arrivals
        let ready = state.arrivalWaiters.filter { $0.count <= arrivals }.map(\.continuation)
        state.arrivalWaiters.removeAll { $0.count <= arrivals }
        return ready
    }

    /// Waits (asynchronously) until the gate is open.
    /// - Throws: `CancellationError` when the waiting task is cancelled first.
    func pass() async throws {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (open, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                    let ready = arrive(&state)
                    if state.released || Task.isCancelled { return (true, ready) }
                    state.waiters[id] = continuation
                    return (false, ready)
                }
                for waiter in ready { waiter.resume() }
                if open {
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Blocks the calling thread until the gate is open.
    func passBlocking() {
        let semaphore = DispatchSemaphore(value: 0)
        let (open, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            let ready = arrive(&state)
            if state.released { return (true, ready) }
            state.blocked.append(semaphore)
            return (false, ready)
        }
        for waiter in ready { waiter.resume() }
        if !open { semaphore.wait() }
    }
}
