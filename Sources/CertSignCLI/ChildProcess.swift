import CertificateProviders
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A program `certsign` runs as a child process (`certsign-emulator`): started with `posix_spawn`,
/// SIGINT and SIGTERM back at their default action in the child, standard input and error inherited,
/// standard output inherited or read through a pipe.
///
/// While one runs, SIGINT and SIGTERM sent to `certsign` are passed on to the child (a signal that
/// arrives before the child exists is passed on as soon as it does), so `kill` of `certsign` stops
/// the child, and the child's exit code is what ``wait()`` returns.
final class ChildProcess: @unchecked Sendable {
    // `pid` and `pending` are guarded by `lock`; `sources` is written once, in `init`.
    private let lock = NSLock()
    private var pid: pid_t?
    private var pending: [Int32] = []
    private var exitCode: Int32?
    private var sources: [any DispatchSourceSignal] = []
    /// The read end of the child's standard output when it was asked for (``start(_:arguments:environment:readingOutput:)``).
    private(set) var output: FileHandle?

    private init() {
        sources = TerminationSignals.install(label: "certsign.child-signals") { [weak self] number in
            self?.forward(number)
        }
    }

    deinit {
        for source in sources { source.cancel() }
        TerminationSignals.restoreDefaults()
    }

    /// Starts `path` with `arguments` (after argv[0], which is `path`) and `environment`.
    /// - Parameter readingOutput: give the child a pipe as standard output, read through ``output``;
    ///   otherwise it writes to this process's standard output.
    /// - Throws: `.fileSystem` when the program cannot be started (the reason names `path`).
    static func start(
        _ path: String,
        arguments: [String],
        environment: [String: String],
        readingOutput: Bool = false
    ) throws -> ChildProcess {
        let child = ChildProcess()
        var pipeEnds: [Int32] = [-1, -1]
        if readingOutput {
            guard pipe(&pipeEnds) == 0 else {
                throw CertificateProviderError(.fileSystem, "cannot make a pipe for \(path): \(errnoText(errno))")
            }
            _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
        }
        let started = spawn(path, [path] + arguments, environment, outputTo: readingOutput ? pipeEnds[1] : nil)
        if readingOutput { close(pipeEnds[1]) }
        guard started.code == 0 else {
            if readingOutput { close(pipeEnds[0]) }
            throw CertificateProviderError(.fileSystem, "cannot run \(path): \(errnoText(started.code))")
        }
        child.started(started.pid)
        if readingOutput { child.output = FileHandle(fileDescriptor: pipeEnds[0], closeOnDealloc: true) }
        return child
    }

    /// Sends `signalNumber` to the child (nothing once it has exited).
    func send(_ signalNumber: Int32) {
        lock.withLock {
            if let pid, exitCode == nil { _ = kill(pid, signalNumber) }
        }
    }

    /// Waits for the child to end: its exit code, or 128 + the signal's number when a signal ended it
    /// (as a shell reports it).
    func wait() async -> Int32 {
        if let code = lock.withLock({ exitCode }) { return code }
        guard let pid = lock.withLock({ pid }) else { return CertSign.exitFailure }
        let code = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            Thread.detachNewThread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                // WIFEXITED / WEXITSTATUS / WTERMSIG are C macros Swift cannot import.
                let terminatingSignal = status & 0x7F
                continuation.resume(returning: terminatingSignal == 0 ? (status >> 8) & 0xFF : 128 + terminatingSignal)
            }
        }
        lock.withLock { exitCode = code }
        return code
    }

    /// SIGTERM, then waits: how every path that started a child ends it.
    func stop() async -> Int32 {
        send(SIGTERM)
        return await wait()
    }

    private func started(_ pid: pid_t) {
        let signals = lock.withLock {
            self.pid = pid
            defer { pending = [] }
            return pending
        }
        for signalNumber in signals { _ = kill(pid, signalNumber) }
    }

    private func forward(_ signalNumber: Int32) {
        lock.withLock {
            if let pid {
                if exitCode == nil { _ = kill(pid, signalNumber) }
            } else {
                pending.append(signalNumber)
            }
        }
    }

    /// posix_spawn with SIGINT and SIGTERM at their default action and no blocked signal in the child.
    private static func spawn(
        _ path: String,
        _ argv: [String],
        _ environment: [String: String],
        outputTo outputDescriptor: Int32?
    ) -> (pid: pid_t, code: Int32) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let outputDescriptor { posix_spawn_file_actions_adddup2(&actions, outputDescriptor, STDOUT_FILENO) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGPIPE)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let arguments = argv.map { strdup($0) } + [nil]
        let variables = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in arguments + variables { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, path, &actions, &attributes, arguments, variables)
        return (pid, code)
    }

    private static func errnoText(_ code: Int32) -> String { String(cString: strerror(code)) }
}
