import Dispatch
import Foundation

/// SIGINT and SIGTERM taken from their default action (ending the process) and handed to a
/// dispatch source each: what ``SignalWaiter``, ``SignInterrupt`` and ``ChildProcess`` share.
enum TerminationSignals {
    /// The signals taken.
    static let numbers = [SIGINT, SIGTERM]

    /// Ignores SIGINT and SIGTERM and runs `handler` (on a serial queue named `label`) for each one
    /// that arrives; returns once both sources are registered, so that no signal sent after this
    /// returns is lost (an ignored signal that arrives before its source is registered would be:
    /// a SIGTERM right after "listening" once was, and the emulator ran on). Cancel the sources and
    /// call ``restoreDefaults()`` to give the signals back.
    static func install(label: String, _ handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        let queue = DispatchQueue(label: label)
        let registered = DispatchGroup()
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in numbers {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { handler(signalNumber) }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            sources.append(source)
        }
        // Registration happens on another thread; 5 s is far more than it takes.
        _ = registered.wait(timeout: .now() + 5)
        return sources
    }

    /// Gives SIGINT and SIGTERM their default action back.
    static func restoreDefaults() {
        for signalNumber in numbers { signal(signalNumber, SIG_DFL) }
    }
}
