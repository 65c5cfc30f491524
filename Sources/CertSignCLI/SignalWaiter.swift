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
        let queue = DispatchQueue(label: "certsign.signals")
        let registered = DispatchGroup()
        for signalNumber in [SIGINT, SIGTERM] {
            // The default action (ending the process) off first; the dispatch source then takes it.
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { [weak self] in self?.signalled() }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            sources.append(source)
        }
        // A source takes its signal only once registered, which happens on another thread: until
        // then an ignored signal would be lost (a SIGTERM right after "listening" once was, and
        // the emulator ran on). 5 s is far more than registration takes.
        _ = registered.wait(timeout: .now() + 5)
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
