import Dispatch
import Foundation

/// Catches SIGINT and SIGTERM from the moment it is made (the default action, ending the process,
/// is replaced by a dispatch source), so one that arrives before ``wait()`` is called is not lost.
package final class SignalWaiter: @unchecked Sendable {
    // `received` and `waiter` are guarded by `lock`; `sources` is written once in init.
    private let lock = NSLock()
    private var received = false
    private var waiter: CheckedContinuation<Void, Never>?
    private var sources: [any DispatchSourceSignal] = []

    package init() {
        sources = TerminationSignals.install(label: "certsign.signals") { [weak self] _ in self?.signalled() }
    }

    private func signalled() {
        let continuation: CheckedContinuation<Void, Never>? = lock.withLock {
            received = true
            defer { waiter = nil }
            return waiter
        }
        continuation?.resume()
    }

    /// Returns once SIGINT or SIGTERM has arrived (at once when one already has).
    package func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = lock.withLock {
                if received { return true }
                waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}
