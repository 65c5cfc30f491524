internal import CCurl
internal import CCurlShims
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// libcurl's process-wide initialisation, done once before the first handle (thread-safe: Swift
/// runs a global's initialiser exactly once).
let curlGlobalInitialization: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

/// One curl multi handle, driven with `curl_multi_socket_action` under one lock, and the thread
/// that waits for its sockets.
///
/// The caller's thread starts its own transfer (``submit(_:)``: add the easy handle and let curl
/// send the request at once), so a request costs no hand-over to another thread; when another
/// thread holds the multi handle, the transfer waits in an inbox that this thread empties before
/// it lets go (so callers never queue on the lock behind the loop). The loop thread
/// sleeps in `epoll_wait` on the sockets curl asks to watch (its socket callback) until curl's next
/// timer (`curl_multi_timeout`), then lets curl read the answers, completes finished transfers and
/// resumes their continuations. Whichever thread holds the lock is the only one inside libcurl for
/// this multi handle and its easy handles, as libcurl requires; curl's callbacks (socket, timer,
/// body, header) run inside those calls. Finished easy handles are reset and kept for reuse;
/// connections live in the multi handle's cache and are reused across transfers (keep-alive).
///
/// `@unchecked Sendable`: every mutable member is read and written only with `lock` held (curl's
/// callbacks run inside curl calls made with the lock held), the inbox only with its own mutex;
/// `multi`, `epollFD` and `wakeFD` are
/// immutable, and waking (`CCurlShims_poller_wake`) and waiting (`epoll_wait`) are thread-safe.
final class CurlMultiLoop: @unchecked Sendable {
    /// The multi handle; nil only when libcurl could not make one (then `startupFailure` says so and
    /// no curl call is made on it).
    private let multi: UnsafeMutableRawPointer?
    private let epollFD: Int32
    private let wakeFD: Int32
    /// Why the loop could not start (no memory for the multi handle, no descriptor left for epoll or
    /// eventfd); every transfer then fails with it instead of the process crashing.
    private let startupFailure: String?
    private typealias Completion = (CurlTransfer, Result<HTTPResponse, HTTPClientError>)
    private struct Inbox {
        var submissions: [CurlTransfer] = []
        var idleHandles: [UnsafeMutableRawPointer] = []
        /// Jobs of tasks that prefer this loop's thread (``CurlLoopExecutor``), run by the loop
        /// between its waits.
        var jobs: [UnownedJob] = []
        /// The loop thread, once it runs (so that a job enqueued on it needs no wake-up).
        var loopThread: pthread_t?
        /// Set when the loop thread has ended: jobs then go to the global executor.
        var ended = false
        /// The executor the jobs run on (``attach(_:)``), held while the loop thread runs (so that a
        /// transport released by one of its own jobs cannot free it mid-turn); let go when it ends.
        var executor: CurlLoopExecutor?
    }

    /// Guards the multi handle and the members below; held during curl calls. A pthread mutex
    /// (NSLock): its `try()` stays in user space, where Mutex's goes to the kernel (PI futex).
    private let lock = NSLock()
    /// Guards the submissions not yet started and the idle easy handles; held only for moments
    /// (taken inside `lock` too, never the other way round).
    private let inbox = Mutex(UncheckedBox(Inbox()))
    private let stopped = DispatchSemaphore(value: 0)
    private static let idleHandleLimit = 32
    /// The longest the loop thread sleeps without a reason (a safety net; curl's timers wake it).
    private static let longestSleepNanoseconds: UInt64 = 1_000_000_000

    // Guarded by `lock`.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var completed: [Completion] = []
    private var stopRequested = false
    /// The sockets in the epoll set and what they are watched for (CURL_POLL_IN, _OUT, _INOUT), so
    /// that a watch that changes nothing costs no epoll_ctl.
    private var registered: [curl_socket_t: Int32] = [:]
    /// The sockets curl opened and will close through this loop's socket hooks
    /// (``installSocketHooks(on:)``), so that the loop hears of their closing.
    private var ownSockets: Set<curl_socket_t> = []
    /// Own sockets curl stopped watching (an idle keep-alive connection) that stay in the epoll set
    /// for input, so that the next request on the connection needs no epoll_ctl. They leave it when
    /// they close, or on their first event (the server closed the idle connection, or sent what
    /// nobody asked for: curl checks a connection before reusing it).
    private var idleRegistered: Set<curl_socket_t> = []
    /// When curl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)` (uptime nanoseconds), nil for never.
    private var timerDeadline: UInt64?
    /// When the sleeping loop thread wakes at the latest; nil while it is awake (it then reads
    /// `timerDeadline` before it sleeps again, so nobody needs to wake it).
    private var plannedWake: UInt64?

    init(maximumConnectionsPerHost: Int) {
        _ = curlGlobalInitialization
        // curl_multi_init fails only when out of memory: every request then fails with that.
        guard let multi = curl_multi_init() else {
            startupFailure =
                "the HTTP transport cannot start: libcurl could not make its multi handle (out of memory); free "
                + "memory and retry"
            self.multi = nil
            epollFD = -1
            wakeFD = -1
            return
        }
        self.multi = multi
        var wake: Int32 = -1
        let epoll = CCurlShims_poller_make(&wake)
        // epoll_create1 and eventfd fail when the process is out of descriptors or memory: the
        // transport then answers every request with that error.
        guard epoll >= 0 else {
            let reason = String(cString: strerror(errno))
            startupFailure =
                "the HTTP transport cannot start its event loop (epoll/eventfd: \(reason)); the process is out of "
                + "file descriptors or memory: raise the descriptor limit (ulimit -n) or close unused files"
            epollFD = -1
            wakeFD = -1
            return
        }
        startupFailure = nil
        epollFD = epoll
        wakeFD = wake
        _ = CCurlShims_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maximumConnectionsPerHost)
        _ = CCurlShims_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(16, 4 * maximumConnectionsPerHost))
        let opaque = Unmanaged.passUnretained(self).toOpaque()  // the loop outlives its multi handle's use
        _ = CCurlShims_multi_setopt_socket_function(multi, curlSocketCallback, opaque)
        let thread = Thread { [self] in run() }
        thread.name = "CurlTransport"
        thread.start()
    }

    /// An easy handle to prepare a transfer on: a reset one from the idle list, or a new one.
    func takeHandle() throws -> UnsafeMutableRawPointer {
        if let startupFailure { throw HTTPClientError(.network, startupFailure) }
        if let handle = inbox.withLock({ $0.value.idleHandles.popLast() }) { return handle }
        guard let handle = curl_easy_init() else {
            throw HTTPClientError(.network, "libcurl cannot make a transfer handle (out of memory)")
        }
        return handle
    }

    /// Returns a handle that never went to the multi handle (preparation failed).
    func returnHandle(_ handle: UnsafeMutableRawPointer) { recycle(handle) }

    /// Starts a prepared transfer, on the caller's thread when the multi handle is free (curl then
    /// sends the request at once), else by the thread that holds it, before that thread lets go.
    /// Its continuation is resumed when it finishes.
    func submit(_ transfer: CurlTransfer) {
        inbox.withLock { $0.value.submissions.append(transfer) }
        startWaitingSubmissions()
    }

    /// Aborts a transfer (task cancellation): it completes with `.cancelled` unless it already finished.
    func cancel(_ transfer: CurlTransfer) {
        transfer.requestCancellation()
        withMulti {
            if active.removeValue(forKey: transfer.handle) != nil {
                remove(transfer)
                finish(transfer, .failure(transfer.cancelledError()))
                refreshTimer()
            }
        }
    }

    /// Stops the thread (in-flight transfers end with `.cancelled`) and frees the multi handle.
    func shutdown() {
        if startupFailure != nil {
            if let multi { curl_multi_cleanup(multi) }  // no thread was started, no transfer reached the handle
            inbox.withLock { $0.value.executor = nil }
            return
        }
        lock.withLock { stopRequested = true }
        CCurlShims_poller_wake(wakeFD)
        if !isLoopThread { stopped.wait() }
    }

    // MARK: Jobs of tasks that prefer the loop thread

    /// Queues a job to run on the loop thread; wakes the thread unless this is it (it runs the
    /// queued jobs before it waits again).
    func enqueue(_ job: UnownedJob) {
        let (onLoop, ended) = inbox.withLock { box -> (Bool, Bool) in
            if box.value.ended || startupFailure != nil { return (false, true) }
            box.value.jobs.append(job)
            return (box.value.loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false, false)
        }
        if ended {
            CurlMultiLoop.runElsewhere(job)
        } else if !onLoop {
            CCurlShims_poller_wake(wakeFD)
        }
    }

    /// Makes `executor` the one jobs run on (its owner keeps it alive while tasks prefer it).
    func attach(_ executor: CurlLoopExecutor) {
        inbox.withLock { $0.value.executor = executor }
    }

    /// The most passes over the job queue between two looks at the sockets: a task's hops (onto an
    /// actor and off it) each queue a new job, so a round trip takes a few passes; a task that
    /// keeps queueing cannot keep the loop from its sockets for longer than this.
    private static let jobPassLimit = 16

    /// Runs the queued jobs, and those they queue, for up to ``jobPassLimit`` passes.
    /// - Returns: whether any ran.
    private func runJobs() -> Bool {
        var ran = false
        for _ in 0..<CurlMultiLoop.jobPassLimit {
            let (jobs, target) = inbox.withLock { box in
                defer { box.value.jobs.removeAll() }
                return (box.value.jobs, box.value.executor)
            }
            guard let target, !jobs.isEmpty else { break }
            for job in jobs { job.runSynchronously(on: target.asUnownedTaskExecutor()) }
            ran = true
        }
        return ran
    }

    /// A job whose loop has ended runs on the global executor (its task then goes on there).
    private static func runElsewhere(_ job: UnownedJob) {
        DispatchQueue.global().async { job.runSynchronously(on: globalConcurrentExecutor.asUnownedTaskExecutor()) }
    }

    private var isLoopThread: Bool {
        inbox.withLock { box in box.value.loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    // MARK: Taking the multi handle

    /// Runs `body` with the lock held (waiting for it), then resumes the transfers that finished.
    private func withMulti(_ body: () -> Void) {
        let (finished, wake) = lock.withLock {
            body()
            startSubmissions()
            return (takeCompleted(), loopNeedsWaking())
        }
        deliver(finished, wake: wake)
        startWaitingSubmissions()
    }

    /// Starts the submissions in the inbox if the lock is free. A thread that finds it taken leaves
    /// them: whoever holds it starts them before letting go, or sees them here right after.
    private func startWaitingSubmissions() {
        while inbox.withLock({ !$0.value.submissions.isEmpty }) {
            guard lock.try() else { return }
            startSubmissions()
            let (finished, wake) = (takeCompleted(), loopNeedsWaking())
            lock.unlock()
            deliver(finished, wake: wake)
        }
    }

    /// Wakes the loop thread when curl's timer moved before its planned wake-up (the loop thread
    /// wakes itself too: it may have planned its sleep before it started these transfers), and
    /// resumes the finished transfers' callers (outside the lock).
    private func deliver(_ finished: [Completion], wake: Bool) {
        if wake { CCurlShims_poller_wake(wakeFD) }
        for (transfer, result) in finished { transfer.resume(with: result) }
    }

    private func run() {
        let capacity = 64
        var sockets = [curl_socket_t](repeating: -1, count: capacity)
        var masks = [Int32](repeating: 0, count: capacity)
        // The system-level name (Foundation's Thread.name does not reach it on Linux), for ps, perf
        // and Thread.current.name.
        CCurlShims_name_this_thread("CurlTransport")
        inbox.withLock { $0.value.loopThread = pthread_self() }
        // The sleep is planned in the same locked section that handled the last wake-up, so that the
        // thread goes back to epoll_wait after resuming its callers without taking the lock again
        // (a caller resumed a moment ago is likely holding it to send its next request).
        var timeout = lock.withLock { planSleep() }
        while true {
            var woken: Int32 = 0
            let count = Int(CCurlShims_poller_wait(epollFD, wakeFD, &sockets, &masks, Int32(capacity), timeout, &woken))
            let (finished, stop, next) = lock.withLock {
                plannedWake = nil
                for index in 0..<count { socketEvent(sockets[index], mask: masks[index]) }
                if let deadline = timerDeadline, deadline <= DispatchTime.now().uptimeNanoseconds {
                    drive(CURL_SOCKET_TIMEOUT, mask: 0)
                }
                startSubmissions()
                return (takeCompleted(), stopRequested, planSleep())
            }
            deliver(finished, wake: false)
            if stop { break }
            startWaitingSubmissions()
            timeout = next
            if runJobs() {
                // The jobs may have started transfers (curl's timer moved) and, past the pass limit,
                // left more jobs: plan again, without sleeping when jobs wait.
                let jobsWaiting = inbox.withLock { !$0.value.jobs.isEmpty }
                timeout = jobsWaiting ? 0 : lock.withLock { planSleep() }
            }
        }
        let remaining = lock.withLock {
            for transfer in active.values {
                remove(transfer)
                finish(transfer, .failure(transfer.releasedError()))
            }
            active.removeAll()
            startSubmissions()  // fails them: stopRequested is set
            return takeCompleted()
        }
        for (done, result) in remaining { done.resume(with: result) }
        let (idle, orphans) = inbox.withLock { box in
            defer {
                box.value.idleHandles.removeAll()
                box.value.jobs.removeAll()
                box.value.ended = true
                box.value.executor = nil  // ends the executor ↔ loop cycle
            }
            return (box.value.idleHandles, box.value.jobs)
        }
        for job in orphans { CurlMultiLoop.runElsewhere(job) }
        for handle in idle { curl_easy_cleanup(handle) }
        curl_multi_cleanup(multi)
        close(wakeFD)
        close(epollFD)
        stopped.signal()
    }

    // MARK: With the lock held

    /// Adds the transfers waiting in the inbox to the multi handle and lets curl start them.
    private func startSubmissions() {
        let submissions = inbox.withLock { box in
            defer { box.value.submissions.removeAll() }
            return box.value.submissions
        }
        guard !submissions.isEmpty else { return }
        var added = false
        for transfer in submissions {
            if stopRequested {
                finish(transfer, .failure(transfer.releasedError()))
            } else if transfer.isCancellationRequested {
                finish(transfer, .failure(transfer.cancelledError()))
            } else if curl_multi_add_handle(multi, transfer.handle) == CURLM_OK {
                active[transfer.handle] = transfer
                added = true
            } else {
                finish(
                    transfer,
                    .failure(HTTPClientError(.network, "\(transfer.summary): libcurl refused the transfer"))
                )
            }
        }
        if added { drive(CURL_SOCKET_TIMEOUT, mask: 0) }  // add_handle asked for an immediate run
    }

    /// Notes when the loop thread will wake at the latest (curl's next timer, at most a second
    /// away) and returns the milliseconds to wait, rounded up so that the timer has expired then.
    private func planSleep() -> Int32 {
        let now = DispatchTime.now().uptimeNanoseconds
        let latest = now + CurlMultiLoop.longestSleepNanoseconds
        let wake = min(timerDeadline ?? latest, latest)
        plannedWake = wake
        return wake <= now ? 0 : Int32((wake - now + 999_999) / 1_000_000)
    }

    /// Lets curl act on a socket event (or on its timer), then collects the transfers that finished.
    private func drive(_ socket: curl_socket_t, mask: Int32) {
        var running: Int32 = 0
        curl_multi_socket_action(multi, socket, mask, &running)
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            let code = CCurlShims_msg_result(message)
            guard let transfer = active.removeValue(forKey: handle) else { continue }
            remove(transfer)
            if transfer.prepareResend(after: code), curl_multi_add_handle(multi, handle) == CURLM_OK {
                active[handle] = transfer  // curl starts it at its next timeout (at once)
                continue
            }
            finish(transfer, transfer.outcome(code))
        }
        refreshTimer()
    }

    /// Takes a transfer's easy handle out of the multi handle (its connection stays in the cache).
    private func remove(_ transfer: CurlTransfer) {
        curl_multi_remove_handle(multi, transfer.handle)
    }

    /// Reads when curl next wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)` (asked after every
    /// curl call rather than taken from CURLMOPT_TIMERFUNCTION, which reports only changes).
    private func refreshTimer() {
        var milliseconds = -1
        curl_multi_timeout(multi, &milliseconds)
        timerDeadline =
            milliseconds < 0 ? nil : DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
    }

    /// Whether curl now wants to run before the sleeping loop thread would wake.
    private func loopNeedsWaking() -> Bool {
        guard let plannedWake, let timerDeadline else { return stopRequested }
        return timerDeadline < plannedWake || stopRequested
    }

    /// Queues the transfer's result (resumed once the lock is released) and recycles its easy handle.
    private func finish(_ transfer: CurlTransfer, _ result: Result<HTTPResponse, HTTPClientError>) {
        recycle(transfer.handle)  // curl_easy_reset drops every pointer to the transfer
        completed.append((transfer, result))
    }

    private func takeCompleted() -> [Completion] {
        defer { completed.removeAll() }
        return completed
    }

    private func recycle(_ handle: UnsafeMutableRawPointer) {
        curl_easy_reset(handle)
        let kept = inbox.withLock { box -> Bool in
            guard box.value.idleHandles.count < CurlMultiLoop.idleHandleLimit else { return false }
            box.value.idleHandles.append(handle)
            return true
        }
        if !kept { curl_easy_cleanup(handle) }
    }

    /// Passes a socket's event to curl, unless curl stopped watching the socket (an idle
    /// connection kept in the epoll set): that one leaves the set instead.
    private func socketEvent(_ socket: curl_socket_t, mask: Int32) {
        if idleRegistered.remove(socket) != nil {
            registered[socket] = nil
            _ = CCurlShims_poller_watch(epollFD, socket, CURL_POLL_REMOVE, 1)
            return
        }
        drive(socket, mask: mask)
    }

    /// Makes curl open and close the handle's sockets through this loop (see ``ownSockets``).
    func installSocketHooks(on handle: UnsafeMutableRawPointer) -> CURLcode {
        // The loop outlives every transfer and every connection of its multi handle.
        CCurlShims_install_socket_hooks(
            handle,
            curlOpenSocket,
            curlCloseSocket,
            Unmanaged.passUnretained(self).toOpaque()
        )
    }

    // MARK: curl's socket callbacks (called inside curl calls, so with the lock held, or at the
    // end of `run` when no other thread calls curl)

    fileprivate func watch(_ socket: curl_socket_t, _ what: Int32) {
        let current = registered[socket]
        if what == CURL_POLL_REMOVE {
            guard let current else { return }
            if current == CURL_POLL_IN && ownSockets.contains(socket) {
                idleRegistered.insert(socket)
                return
            }
            registered[socket] = nil
            _ = CCurlShims_poller_watch(epollFD, socket, what, 1)
            return
        }
        idleRegistered.remove(socket)
        guard current != what else { return }
        // A failure leaves the socket unwatched; curl's timers still end its transfer.
        if CCurlShims_poller_watch(epollFD, socket, what, current == nil ? 0 : 1) == 0 {
            registered[socket] = what
        } else {
            registered[socket] = nil
        }
    }

    fileprivate func opened(_ socket: curl_socket_t) {
        ownSockets.insert(socket)
    }

    /// Called before curl closes one of its sockets: it leaves the epoll set first (a forked child
    /// could keep the socket open, and with it its place in the set).
    fileprivate func closing(_ socket: curl_socket_t) {
        ownSockets.remove(socket)
        idleRegistered.remove(socket)
        if registered.removeValue(forKey: socket) != nil {
            _ = CCurlShims_poller_watch(epollFD, socket, CURL_POLL_REMOVE, 1)
        }
    }
}

// `user` is the unretained loop: it outlives every call into its multi handle.

private let curlSocketCallback: curl_socket_callback = { _, socket, what, user, _ in
    guard let user else { return 0 }
    Unmanaged<CurlMultiLoop>.fromOpaque(user).takeUnretainedValue().watch(socket, what)
    return 0
}

private let curlOpenSocket: curl_opensocket_callback = { user, _, address in
    guard let user, let address else { return CURL_SOCKET_BAD }
    let socket = CCurlShims_open_socket(address)
    if socket != CURL_SOCKET_BAD { Unmanaged<CurlMultiLoop>.fromOpaque(user).takeUnretainedValue().opened(socket) }
    return socket
}

private let curlCloseSocket: curl_closesocket_callback = { user, socket in
    if let user { Unmanaged<CurlMultiLoop>.fromOpaque(user).takeUnretainedValue().closing(socket) }
    return close(socket)
}

/// Lets raw handles and non-Sendable values cross a Mutex; every access takes the lock.
private struct UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// Runs jobs on a ``CurlMultiLoop``'s thread: a task that prefers it (`withTaskExecutorPreference`)
/// sends its requests and resumes with the answers on the thread that waits for the sockets, so a
/// round trip needs no hand-over between threads.
final class CurlLoopExecutor: TaskExecutor {
    /// Kept alive by the executor: a job that arrives after the transport is gone still finds the
    /// loop, which hands it to the global executor once its thread has ended. (The loop holds its
    /// executor only while its thread runs.)
    private let loop: CurlMultiLoop

    init(loop: CurlMultiLoop) {
        self.loop = loop
        loop.attach(self)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        loop.enqueue(UnownedJob(job))
    }
}
