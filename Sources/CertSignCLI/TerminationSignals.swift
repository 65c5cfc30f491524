internal import CSystemShims
import Dispatch
import Foundation

/// SIGINT and SIGTERM taken from their default action (ending the process) and handed to a
/// dispatch source each: what ``SignalWaiter``, ``SignInterrupt`` and ``ChildProcess`` share.
enum TerminationSignals {
    /// The signals taken.
    static let numbers = [SIGINT, SIGTERM]

    /// Takes SIGINT and SIGTERM from their default action and runs `handler` (on a serial queue
    /// named `label`) for each one that arrives; returns once both sources are registered.
    ///
    /// No signal sent after the process started taking them is lost. The threads of an async
    /// `main` (parked in `dispatch_main`) and of the dispatch pool block both signals, so a signal
    /// stays pending until a source's signal descriptor reads it; `SIG_IGN` would discard one
    /// already pending (a SIGTERM sent while the worker was still starting was: it ran on), so the
    /// signals get a C handler that only notes an arrival, and a signal noted before the sources
    /// were registered is handed to `handler` here. Cancel the sources and call
    /// ``restoreDefaults()`` to give the signals back.
    static func install(label: String, _ handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        let queue = DispatchQueue(label: label)
        let registered = DispatchGroup()
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in numbers {
            _ = CSystemShims_noteSignal(signalNumber)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { handler(signalNumber) }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            sources.append(source)
        }
        // Registration happens on another thread; 5 s is far more than it takes.
        _ = registered.wait(timeout: .now() + 5)
        for signalNumber in numbers where CSystemShims_takeNotedSignal(signalNumber) == 1 {
            queue.async { handler(signalNumber) }
        }
        return sources
    }

    /// Gives SIGINT and SIGTERM their default action back.
    static func restoreDefaults() {
        for signalNumber in numbers {
            signal(signalNumber, SIG_DFL)
            _ = CSystemShims_takeNotedSignal(signalNumber)
        }
    }
}
