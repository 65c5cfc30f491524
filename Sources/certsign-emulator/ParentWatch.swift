import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Ends the emulator with its parent: `certsign emulator` and `certsign demo` start this program with
/// `CERTSIGN_EMULATOR_PARENT` set to their process id, and when that process is gone (even killed
/// with SIGKILL, which it cannot pass on) the emulator gets SIGTERM and stops as if it had been sent.
enum ParentWatch {
    /// The environment variable naming the parent's process id.
    static let variable = "CERTSIGN_EMULATOR_PARENT"

    /// Starts watching when `environment` names a parent (checked every 200 ms on a thread of its own).
    static func start(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let parent = environment[variable].flatMap({ pid_t($0) }) else { return }
        Thread.detachNewThread {
            // The parent may be gone already: the child is then re-parented at once.
            while getppid() == parent { usleep(200_000) }
            kill(getpid(), SIGTERM)
        }
    }
}
