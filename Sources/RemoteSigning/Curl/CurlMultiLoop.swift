internal import CCurl
internal import CCurlShims
import CertificateProviders
import Foundation
import Synchronization

/// libcurl's process-wide initialisation, done once before the first handle (thread-safe: Swift
/// runs a global's initialiser exactly once).
let curlGlobalInitialization: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

/// One curl multi handle and the thread that drives it.
///
/// Callers hand over prepared transfers (``submit(_:)``) and cancellations (``cancel(_:)``) through
/// a locked inbox and wake the thread with `curl_multi_wakeup`; the thread adds and removes easy
/// handles, runs `curl_multi_perform`, completes finished transfers (resuming their continuations)
/// and sleeps in `curl_multi_poll`. Only this thread touches the multi handle and in-flight easy
/// handles, as libcurl requires. Finished easy handles are reset and kept for reuse; connections
/// live in the multi handle's cache and are reused across transfers (keep-alive).
///
/// `@unchecked Sendable`: `multi` is only used on the loop thread (and by `curl_multi_wakeup`, which
/// libcurl allows from any thread); `active` is loop-thread state; the rest is behind the mutex.
final class CurlMultiLoop: @unchecked Sendable {
    private struct Inbox {
        var adds: [CurlTransfer] = []
        var cancels: [CurlTransfer] = []
        var stopRequested = false
        var idleHandles: [UnsafeMutableRawPointer] = []
    }

    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(UncheckedInbox(Inbox()))
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private let stopped = DispatchSemaphore(value: 0)
    private static let idleHandleLimit = 32

    init(maximumConnectionsPerHost: Int) {
        _ = curlGlobalInitialization
        // curl_multi_init fails only when out of memory.
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        self.multi = multi
        _ = CCurlShims_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maximumConnectionsPerHost)
        _ = CCurlShims_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(16, 4 * maximumConnectionsPerHost))
        let thread = Thread { [self] in run() }
        thread.name = "CurlTransport"
        thread.start()
    }

    /// An easy handle to prepare a transfer on: a reset one from the idle list, or a new one.
    func takeHandle() throws -> UnsafeMutableRawPointer {
        if let handle = inbox.withLock({ $0.value.idleHandles.popLast() }) { return handle }
        guard let handle = curl_easy_init() else {
            throw CertificateProviderError(.network, "libcurl cannot make a transfer handle (out of memory)")
        }
        return handle
    }

    /// Returns a handle that never went to the loop (preparation failed).
    func returnHandle(_ handle: UnsafeMutableRawPointer) {
        curl_easy_reset(handle)
        let kept = inbox.withLock { box -> Bool in
            guard box.value.idleHandles.count < CurlMultiLoop.idleHandleLimit else { return false }
            box.value.idleHandles.append(handle)
            return true
        }
        if !kept { curl_easy_cleanup(handle) }
    }

    /// Starts a prepared transfer; its continuation is resumed on the loop thread.
    func submit(_ transfer: CurlTransfer) {
        inbox.withLock { $0.value.adds.append(transfer) }
        curl_multi_wakeup(multi)
    }

    /// Aborts a transfer (task cancellation): it completes with `.cancelled` unless it already finished.
    func cancel(_ transfer: CurlTransfer) {
        transfer.requestCancellation()
        inbox.withLock { $0.value.cancels.append(transfer) }
        curl_multi_wakeup(multi)
    }

    /// Stops the thread (in-flight transfers end with `.cancelled`) and frees the multi handle.
    func shutdown() {
        inbox.withLock { $0.value.stopRequested = true }
        curl_multi_wakeup(multi)
        if Thread.current.name != "CurlTransport" { stopped.wait() }
    }

    private func run() {
        var running: Int32 = 0
        while true {
            let (adds, cancels, stop) = inbox.withLock { box in
                defer {
                    box.value.adds.removeAll()
                    box.value.cancels.removeAll()
                }
                return (box.value.adds, box.value.cancels, box.value.stopRequested)
            }
            for transfer in adds {
                if transfer.isCancellationRequested {
                    finish(transfer, .failure(transfer.cancelledError()))
                } else if curl_multi_add_handle(multi, transfer.handle) == CURLM_OK {
                    active[transfer.handle] = transfer
                } else {
                    finish(
                        transfer,
                        .failure(
                            CertificateProviderError(.network, "\(transfer.summary): libcurl refused the transfer")
                        )
                    )
                }
            }
            for transfer in cancels where active.removeValue(forKey: transfer.handle) != nil {
                curl_multi_remove_handle(multi, transfer.handle)
                finish(transfer, .failure(transfer.cancelledError()))
            }
            if stop { break }
            curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
                let code = CCurlShims_msg_result(message)
                guard let transfer = active.removeValue(forKey: handle) else { continue }
                curl_multi_remove_handle(multi, handle)
                finish(transfer, transfer.outcome(code))
            }
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        for (handle, transfer) in active {
            curl_multi_remove_handle(multi, handle)
            finish(
                transfer,
                .failure(
                    CertificateProviderError(
                        .cancelled,
                        "\(transfer.summary): the transport was released during the request"
                    )
                )
            )
        }
        active.removeAll()
        let idle = inbox.withLock { box in
            defer { box.value.idleHandles.removeAll() }
            return box.value.idleHandles
        }
        for handle in idle { curl_easy_cleanup(handle) }
        curl_multi_cleanup(multi)
        stopped.signal()
    }

    /// Resumes the transfer's caller and recycles its easy handle.
    private func finish(_ transfer: CurlTransfer, _ result: Result<HTTPResponse, CertificateProviderError>) {
        returnHandle(transfer.handle)  // curl_easy_reset drops every pointer to the transfer
        transfer.resume(with: result)
    }
}

/// Lets the inbox (raw handles, non-Sendable transfers) live in a Mutex; every access takes the lock.
private struct UncheckedInbox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
