internal import CMicroHTTPD
internal import CMicroHTTPDShims
import CertificateProviders
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One request as the emulator's router sees it.
struct ServerRequest: Sendable {
    var method: String
    var path: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// The body went over the configured limit; ``body`` holds only what fitted.
    var bodyTooLarge: Bool

    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The token of an `Authorization: Bearer <token>` header, or nil when there is none.
    var bearerToken: String? {
        guard let header = header("Authorization"), header.hasPrefix("Bearer "), header.count > 7 else { return nil }
        return String(header.dropFirst(7))
    }
}

/// One response; a nil response from the handler drops the connection without answering.
struct ServerResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
}

/// A libmicrohttpd daemon (thread per connection, internal polling thread) that hands each
/// complete request to a Swift closure.
///
/// The access handler is called several times per request: first with no body (we allocate a
/// ``RequestContext`` and keep it in MHD's per-request pointer), then once per body chunk (we
/// accumulate up to the limit and discard the rest), then with no more data (we call the handler
/// and queue its response). The completed callback releases the context.
final class MicroHTTPServer: Sendable {
    typealias Handler = @Sendable (ServerRequest) -> ServerResponse?

    struct Limits: Sendable {
        var maxBodyBytes: Int
        var connectionMemoryLimit: Int
        var connectionTimeoutSeconds: Int
        var connectionLimit: Int
    }

    /// TLS for the daemon: the server's key and certificate chain, and the CAs a client certificate
    /// must chain to (nil: no client certificate is asked for).
    struct TLSMaterial: Sendable {
        var keyPEM: Secret
        var certificateChainPEM: String
        var clientTrustPEM: String?
    }

    private let handler: Handler
    private let limits: Limits
    private let tls: TLSMaterial?
    /// Whether every request's connection must carry a valid client certificate.
    fileprivate var requiresClientCertificate: Bool { tls?.clientTrustPEM != nil }
    // The daemon pointer, guarded; `MHD_Daemon*` is only used under the lock or after it is taken out.
    private let daemon = Mutex<UncheckedPointer?>(nil)

    init(limits: Limits, tls: TLSMaterial? = nil, handler: @escaping Handler) {
        self.limits = limits
        self.tls = tls
        self.handler = handler
    }

    deinit { stop() }

    /// Binds `host:port` (port 0 = ephemeral) and starts serving; returns the bound port.
    func start(host: String, port: UInt16) throws -> UInt16 {
        if tls != nil, CMicroHTTPDShims_tls_supported() == 0 {
            throw CertificateProviderError.unsupportedOperation(
                "this libmicrohttpd was built without TLS (MHD_FEATURE_TLS); install Debian's libmicrohttpd12"
            )
        }
        return try daemon.withLock { current in
            guard current == nil else {
                throw CertificateProviderError.invalidParameter("the emulator is already running")
            }
            var flags =
                MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_THREAD_PER_CONNECTION.rawValue
                | MHD_USE_POLL.rawValue
            let context = Unmanaged.passUnretained(self).toOpaque()
            var started: OpaquePointer?
            var v4 = sockaddr_in()
            var v6 = sockaddr_in6()
            if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
                v4.sin_family = sa_family_t(AF_INET)
                v4.sin_port = port.bigEndian
                started = withUnsafePointer(to: &v4) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                        startDaemon(flags: flags, address: address, context: context)
                    }
                }
            } else if inet_pton(AF_INET6, host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), &v6.sin6_addr)
                == 1
            {
                flags |= MHD_USE_IPv6.rawValue
                v6.sin6_family = sa_family_t(AF_INET6)
                v6.sin6_port = port.bigEndian
                started = withUnsafePointer(to: &v6) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                        startDaemon(flags: flags, address: address, context: context)
                    }
                }
            } else {
                throw CertificateProviderError.invalidParameter(
                    "the emulator host must be an IP address such as 127.0.0.1 or ::1, not '\(host)'"
                )
            }
            guard let started else {
                if tls != nil {
                    throw CertificateProviderError(
                        .network,
                        "the emulator cannot listen with TLS on \(host):\(port) (address in use, or the server key "
                            + "or certificate is unusable)"
                    )
                }
                throw CertificateProviderError(
                    .network,
                    "the emulator cannot listen on \(host):\(port) (address in use or not available)"
                )
            }
            let bound = CMicroHTTPDShims_bind_port(started)
            guard bound != 0 else {
                MHD_stop_daemon(started)
                throw CertificateProviderError(.network, "the emulator started but its port cannot be read")
            }
            current = UncheckedPointer(pointer: started)
            return bound
        }
    }

    /// Stops the daemon: closes the listening socket and every connection, then joins the threads.
    func stop() {
        let running = daemon.withLock { current -> UncheckedPointer? in
            defer { current = nil }
            return current
        }
        if let running { MHD_stop_daemon(running.pointer) }
    }

    private func startDaemon(
        flags: UInt32,
        address: UnsafePointer<sockaddr>,
        context: UnsafeMutableRawPointer
    ) -> OpaquePointer? {
        func start(
            _ key: UnsafePointer<CChar>?,
            _ chain: UnsafePointer<CChar>?,
            _ trust: UnsafePointer<CChar>?
        ) -> OpaquePointer? {
            CMicroHTTPDShims_start(
                flags,
                address,
                accessHandler,
                context,
                completedHandler,
                nil,
                limits.connectionMemoryLimit,
                UInt32(limits.connectionTimeoutSeconds),
                UInt32(limits.connectionLimit),
                key,
                chain,
                trust
            )
        }
        guard let tls else { return start(nil, nil, nil) }
        // libmicrohttpd reads the PEM while the daemon starts (GnuTLS copies it).
        return tls.keyPEM.withCString { key in
            tls.certificateChainPEM.withCString { chain in
                guard let trust = tls.clientTrustPEM else { return start(key, chain, nil) }
                return trust.withCString { start(key, chain, $0) }
            }
        }
    }

    // MARK: Per request

    fileprivate func handle(connection: OpaquePointer, method: String, path: String, context: RequestContext) -> Bool {
        let request = ServerRequest(
            method: method,
            path: path,
            headers: MicroHTTPServer.headers(of: connection),
            body: context.body,
            bodyTooLarge: context.tooLarge
        )
        guard let response = handler(request) else { return false }
        return response.body.withUnsafeBytes { bytes -> Bool in
            // MHD_RESPMEM_MUST_COPY (raw value 2): MHD copies the bytes before this closure returns.
            guard let mustCopy = MHD_ResponseMemoryMode(rawValue: 2),
                let mhdResponse = MHD_create_response_from_buffer(
                    bytes.count,
                    UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                    mustCopy
                )
            else { return false }
            defer { MHD_destroy_response(mhdResponse) }
            for header in response.headers { _ = MHD_add_response_header(mhdResponse, header.name, header.value) }
            return MHD_queue_response(connection, UInt32(response.status), mhdResponse) == MHD_Result.YES
        }
    }

    fileprivate func accept(chunk: UnsafeRawBufferPointer, into context: RequestContext) {
        guard !context.tooLarge else { return }
        if context.body.count + chunk.count > limits.maxBodyBytes {
            context.tooLarge = true
            context.body.removeAll()
        } else {
            context.body.append(contentsOf: chunk)
        }
    }

    private static func headers(of connection: OpaquePointer) -> [(name: String, value: String)] {
        let collector = HeaderCollector()
        let box = Unmanaged.passRetained(collector)
        defer { box.release() }
        _ = MHD_get_connection_values(
            connection,
            MHD_ValueKind.HEADER_KIND,
            { cls, _, key, value in
                guard let cls, let key else { return MHD_Result.YES }
                let collector = Unmanaged<HeaderCollector>.fromOpaque(cls).takeUnretainedValue()
                collector.headers.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
                return MHD_Result.YES
            },
            box.toOpaque()
        )
        return collector.headers
    }
}

/// A daemon pointer that can sit in a Mutex; it is only dereferenced by libmicrohttpd.
private struct UncheckedPointer: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// The state of one request across the access-handler calls; owned by MHD's per-request pointer.
private final class RequestContext {
    var body: [UInt8] = []
    var tooLarge = false
}

private final class HeaderCollector {
    var headers: [(name: String, value: String)] = []
}

/// The MHD access handler: `cls` is the unretained server (alive while the daemon runs, because
/// `stop()` joins every thread before the server can go away).
private let accessHandler: MHD_AccessHandlerCallback = {
    cls,
    connection,
    url,
    method,
    _,
    uploadData,
    uploadDataSize,
    perRequest in
    guard let cls, let connection, let perRequest else { return MHD_Result.NO }
    let server = Unmanaged<MicroHTTPServer>.fromOpaque(cls).takeUnretainedValue()
    guard let existing = perRequest.pointee else {
        // A client certificate is checked before anything of the request is used; a missing or
        // untrusted one ends the connection with a TLS alert.
        if server.requiresClientCertificate, CMicroHTTPDShims_check_client_certificate(connection) == 0 {
            return MHD_Result.NO
        }
        perRequest.pointee = Unmanaged.passRetained(RequestContext()).toOpaque()
        return MHD_Result.YES
    }
    let context = Unmanaged<RequestContext>.fromOpaque(existing).takeUnretainedValue()
    if let uploadDataSize, uploadDataSize.pointee > 0 {
        if let uploadData {
            server.accept(
                chunk: UnsafeRawBufferPointer(start: uploadData, count: uploadDataSize.pointee),
                into: context
            )
        }
        uploadDataSize.pointee = 0
        return MHD_Result.YES
    }
    let path = url.map { String(cString: $0) } ?? "/"
    let verb = method.map { String(cString: $0) } ?? "GET"
    return server.handle(connection: connection, method: verb, path: path, context: context)
        ? MHD_Result.YES : MHD_Result.NO
}

/// Releases the per-request context when MHD is done with the request (answered, dropped or timed out).
private let completedHandler: MHD_RequestCompletedCallback = { _, _, perRequest, _ in
    guard let perRequest, let existing = perRequest.pointee else { return }
    Unmanaged<RequestContext>.fromOpaque(existing).release()
    perRequest.pointee = nil
}
