import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM while `certsign sign` works: from ``install()`` until ``restore()`` the
/// signals no longer end the process; the first one runs the action given to ``onSignal(_:)``
/// (the command cancels its work, which stops after the group in flight), and ``exitCode`` is then
/// 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), as a shell reports a process the
/// signal ended. A second signal while the command winds down (a server that does not answer)
/// ends the process at once with that code: the journal loses no commit to it, and the next run
/// removes what it left (hidden temporary files).
final class SignInterrupt: @unchecked Sendable {
    // `received` and `action` are guarded by `lock`; `sources` is written by install and restore,
    // on the command's task only.
    private let lock = NSLock()
    private var received: Int32?
    private var action: (@Sendable () -> Void)?
    private var sources: [any DispatchSourceSignal] = []

    /// Catches SIGINT and SIGTERM until ``restore()``; returns once both are taken (as
    /// ``SignalWaiter`` does, a signal sent before its dispatch source is registered would be lost).
    static func install() -> SignInterrupt {
        let interrupt = SignInterrupt()
        interrupt.sources = TerminationSignals.install(label: "certsign.sign-interrupt") { [weak interrupt] number in
            interrupt?.signalled(number)
        }
        return interrupt
    }

    /// Gives SIGINT and SIGTERM their default action back (ending the process).
    func restore() {
        for source in sources { source.cancel() }
        sources = []
        TerminationSignals.restoreDefaults()
    }

    /// Runs `action` on the first signal (at once when one has arrived already).
    func onSignal(_ action: @escaping @Sendable () -> Void) {
        let now = lock.withLock {
            self.action = action
            return received != nil
        }
        if now { action() }
    }

    private func signalled(_ number: Int32) {
        let (first, action): (Bool, (@Sendable () -> Void)?) = lock.withLock {
            guard received == nil else { return (false, nil) }
            received = number
            return (true, self.action)
        }
        guard first else {
            let text = "certsign: a second \(number == SIGTERM ? "SIGTERM" : "SIGINT"): stopping at once\n"
            _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
            _exit(128 + number)
        }
        action?()
    }

    /// What `task` returns, or nil as soon as a signal arrives first (the task is then cancelled
    /// and left to end by itself: what it opens has written nothing).
    /// - Throws: what the task throws, when it ends before any signal.
    func value<Value: Sendable>(of task: Task<Value, any Error>) async throws -> Value? {
        let outcome: Result<Value, any Error>? = await withCheckedContinuation { continuation in
            let once = ResumeOnce(continuation)
            onSignal {
                task.cancel()
                once.resume(nil)
            }
            Task { once.resume(await task.result) }
        }
        return try outcome?.get()
    }

    /// The signal that arrived (`SIGINT`, `SIGTERM`), or nil.
    var signalNumber: Int32? { lock.withLock { received } }

    /// 130 after SIGINT, 143 after SIGTERM, nil when no signal arrived.
    var exitCode: Int32? { signalNumber.map { 128 + $0 } }

    /// "SIGINT" or "SIGTERM".
    var signalName: String { signalNumber == SIGTERM ? "SIGTERM" : "SIGINT" }
}

/// Resumes a continuation once: the first of several events that may each end a wait.
private final class ResumeOnce<Value: Sendable>: @unchecked Sendable {
    // `continuation` is taken under `lock`, so exactly one caller resumes it.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Value, Never>?

    init(_ continuation: CheckedContinuation<Value, Never>) { self.continuation = continuation }

    func resume(_ value: Value) {
        let taken: CheckedContinuation<Value, Never>? = lock.withLock {
            defer { continuation = nil }
            return continuation
        }
        taken?.resume(returning: value)
    }
}
