internal import CCurl
internal import CCurlShims
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One request on one easy handle: prepared on the caller's thread, then driven and completed only
/// inside ``CurlMultiLoop``'s lock (curl's callbacks run in curl calls made with it held).
///
/// `@unchecked Sendable`: the mutable state (body, headers, continuation) is written before the
/// hand-over to the loop and afterwards only with the loop's lock held; the cancellation flag is
/// atomic.
final class CurlTransfer: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    var continuation: UnsafeContinuation<HTTPResponse, any Error>?

    private let request: HTTPRequest
    private let urlString: String
    /// Whether curl looks for proxies in the environment (else none is used).
    private let proxyFromEnvironment: Bool
    private let timeout: TimeInterval
    private let limit: Int
    private let isHTTPS: Bool
    private let clientSubject: String?
    private let tls: CurlTLSSetup
    private let cancellation = Atomic<Bool>(false)
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// What the TLS hooks saw: reference-counted, shared with the SSL_CTX of the connection this
    /// transfer opens, which may outlive the transfer (kept alive for later transfers).
    private let tlsReport: UnsafeMutablePointer<CCurlShims_tls_transfer>
    private var body: [UInt8] = []
    private var headers: [(name: String, value: String)] = []
    /// A copy of the body for curl to send (CURLOPT_POSTFIELDS), wiped in `deinit`: it may hold a
    /// ``HTTPRequest/secretBody``.
    private var upload: UnsafeMutableRawBufferPointer?
    private var bodyTooLarge = false
    /// Whether the request was already sent again on a new connection (see ``prepareResend(after:)``).
    private var resent = false

    /// - Parameters:
    ///   - urlString: `request.url.absoluteString` (the caller has it already).
    ///   - proxyFromEnvironment: whether a proxy variable was set when the transport was made.
    init(
        request: HTTPRequest,
        urlString: String,
        configuration: CurlTransport.Configuration,
        tls: CurlTLSSetup,
        proxyFromEnvironment: Bool,
        pool: CurlMultiLoop
    ) throws {
        self.request = request
        self.proxyFromEnvironment = proxyFromEnvironment
        self.urlString = urlString
        self.tls = tls
        timeout = max(0.001, request.timeout)
        limit = configuration.maximumResponseBodyBytes
        isHTTPS = CurlTransfer.hasHTTPSScheme(urlString)
        clientSubject = tls.clientSubject
        // First the steps that can fail, so that nothing allocated below can leak.
        handle = try pool.takeHandle()
        guard let report = CCurlShims_tls_transfer_create(UnsafePointer(tls.config)) else {
            pool.returnHandle(handle)
            throw HTTPClientError(.network, "the HTTP transport is out of memory (a TLS report)")
        }
        tlsReport = report
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        do {
            try configure(pool)
        } catch {
            pool.returnHandle(handle)
            throw error
        }
    }

    deinit {
        if let upload {
            if let base = upload.baseAddress { explicit_bzero(base, upload.count) }
            upload.deallocate()
        }
        if let headerList { curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
        // The SSL_CTX of a connection this transfer opened may hold the report a while longer.
        CCurlShims_tls_transfer_release(tlsReport)
    }

    /// "METHOD scheme://host:port/path", for error messages (made only when one is): the scheme and
    /// port say which server was meant (http or https, which of several on one host); user
    /// information and the query (where tokens may ride) are left out.
    var summary: String {
        let url = request.url
        let port = url.port.map { ":\($0)" } ?? ""
        let host = url.host.map { $0.contains(":") ? "[\($0)]" : $0 } ?? ""
        return "\(request.method) \(url.scheme.map { "\($0)://" } ?? "")\(host)\(port)\(url.path)"
    }

    /// Whether an absolute URL string starts with `https:` (any case), without parsing the URL again.
    static func hasHTTPSScheme(_ urlString: String) -> Bool {
        var bytes = urlString.utf8.makeIterator()
        for expected in "https:".utf8 {
            guard let byte = bytes.next() else { return false }
            let lowered = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            guard lowered == expected else { return false }
        }
        return true
    }

    var isCancellationRequested: Bool { cancellation.load(ordering: .acquiring) }

    func requestCancellation() { cancellation.store(true, ordering: .releasing) }

    func cancelledError() -> HTTPClientError {
        HTTPClientError(.cancelled, "\(summary): the request was cancelled")
    }

    /// The error of a transfer the transport dropped because it was released (its loop stopped).
    func releasedError() -> HTTPClientError {
        HTTPClientError(.cancelled, "\(summary): the transport was released during the request")
    }

    /// Resumes the caller once.
    func resume(with result: Result<HTTPResponse, HTTPClientError>) {
        let continuation = self.continuation
        self.continuation = nil
        continuation?.resume(with: result.mapError { $0 as any Error })
    }

    // MARK: Preparation (caller's thread)

    /// The first option curl refused, while options are set one after another.
    private struct OptionOutcome {
        var failed: CURLcode = CURLE_OK
        mutating func set(_ code: CURLcode) { if code != CURLE_OK && failed == CURLE_OK { failed = code } }
    }

    private func configure(_ pool: CurlMultiLoop) throws {
        var options = OptionOutcome()
        configureConnection(pool, &options)
        configureMethod(&options)
        let list = try makeHeaderList()
        headerList = list
        options.set(CCurlShims_easy_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list)))
        guard options.failed == CURLE_OK else {
            throw HTTPClientError(
                .network,
                "\(summary): libcurl refused an option (\(String(cString: curl_easy_strerror(options.failed))))"
            )
        }
    }

    /// URL, protocols, timeouts, HTTP version, TLS, callbacks, size limit and proxy.
    private func configureConnection(_ pool: CurlMultiLoop, _ options: inout OptionOutcome) {
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        // Strings go to curl through withCString or as static text: passing a String where C wants a
        // `const char *` copies it into a new array first (curl copies the text it keeps anyway).
        options.set(urlString.withCString { CCurlShims_easy_setopt_string(handle, CURLOPT_URL, $0) })
        options.set(setStatic(CURLOPT_PROTOCOLS_STR, "http,https"))
        options.set(CCurlShims_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        options.set(pool.installSocketHooks(on: handle))
        options.set(CCurlShims_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        let milliseconds = Int(min(timeout * 1000, Double(Int32.max)).rounded(.up))
        options.set(CCurlShims_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds))
        options.set(CCurlShims_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds))
        options.set(CCurlShims_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS))
        options.set(CCurlShims_easy_setopt_long(handle, CURLOPT_PIPEWAIT, 1))
        // Not on a kept-alive connection: curl would send the request again if that one closed
        // without an answer.
        if request.atMostOnce { options.set(CCurlShims_easy_setopt_long(handle, CURLOPT_FRESH_CONNECT, 1)) }
        options.set(CCurlShims_easy_setopt_long(handle, CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1_2))
        options.set(CCurlShims_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        options.set(CCurlShims_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        if let replacement = tls.replacementCAFile {
            options.set(replacement.withCString { CCurlShims_easy_setopt_string(handle, CURLOPT_CAINFO, $0) })
            options.set(CCurlShims_easy_setopt_string(handle, CURLOPT_CAPATH, nil))
        }
        if isHTTPS { options.set(CCurlShims_install_tls_hook(handle, tlsReport)) }
        options.set(CCurlShims_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))
        options.set(CCurlShims_easy_setopt_write_function(handle, CURLOPT_WRITEFUNCTION, curlWriteBody))
        options.set(CCurlShims_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, opaque))
        options.set(CCurlShims_easy_setopt_write_function(handle, CURLOPT_HEADERFUNCTION, curlWriteHeader))
        options.set(CCurlShims_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, opaque))
        options.set(CCurlShims_easy_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(limit)))
        if !proxyFromEnvironment {
            // No proxy variable was set when the transport was made: say so, which spares curl
            // its environment lookups on every request.
            options.set(setStatic(CURLOPT_PROXY, ""))
            options.set(setStatic(CURLOPT_NOPROXY, ""))
        }
    }

    /// The method and, with a body, the buffer curl sends it from.
    private func configureMethod(_ options: inout OptionOutcome) {
        let method = request.method
        let hasBody = request.bodyCount > 0
        if method == .get && !hasBody {
            options.set(CCurlShims_easy_setopt_long(handle, CURLOPT_HTTPGET, 1))
        } else if method == .head && !hasBody {
            options.set(CCurlShims_easy_setopt_long(handle, CURLOPT_NOBODY, 1))
        } else if hasBody || method == .post || method == .put {
            // curl sends the headers and a small body in one write from this buffer, and can send it
            // again when a reused connection turns out to be closed.
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, request.bodyCount), alignment: 1)
            request.withBodyBytes { bytes in
                if let base = bytes.baseAddress, !bytes.isEmpty {
                    buffer.baseAddress?.copyMemory(from: base, byteCount: bytes.count)
                }
            }
            upload = buffer
            options.set(CCurlShims_easy_setopt_long(handle, CURLOPT_POST, 1))
            options.set(
                CCurlShims_easy_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.bodyCount))
            )
            options.set(CCurlShims_easy_setopt_pointer(handle, CURLOPT_POSTFIELDS, buffer.baseAddress))
            if method != .post {
                options.set(CCurlShims_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method.rawValue))
            }
        } else {
            options.set(CCurlShims_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method.rawValue))
        }
    }

    /// The request's headers as a curl list (nil when there are none).
    /// - Throws: `.invalidParameter` for a header with a line break or colon in its name or value.
    private func makeHeaderList() throws -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for header in request.headers {
            // Bytes, not Characters: "\r\n" is one Character, equal to neither "\r" nor "\n".
            guard !header.name.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == UInt8(ascii: ":") }),
                !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A })
            else {
                if let list { curl_slist_free_all(list) }
                throw HTTPClientError.invalidParameter(
                    "the header '\(header.name)' has a line break or colon in its name or value"
                )
            }
            // "Name;" sends a header with an empty value ("Name:" would remove curl's own).
            let line = header.value.isEmpty ? "\(header.name);" : "\(header.name): \(header.value)"
            list = line.withCString { curl_slist_append(list, $0) }
        }
        // No "Expect: 100-continue" round trip before a body.
        if request.header("Expect") == nil {
            let expect: StaticString = "Expect:"
            list = expect.utf8Start.withMemoryRebound(to: CChar.self, capacity: expect.utf8CodeUnitCount + 1) {
                curl_slist_append(list, $0)
            }
        }
        return list
    }

    /// Sets a string option from static text (no copy on the way to curl).
    private func setStatic(_ option: CURLoption, _ text: StaticString) -> CURLcode {
        // A literal of several characters (or none) is stored as a NUL-terminated C string.
        precondition(text.hasPointerRepresentation)
        return text.utf8Start.withMemoryRebound(to: CChar.self, capacity: text.utf8CodeUnitCount + 1) {
            CCurlShims_easy_setopt_string(handle, option, $0)
        }
    }

    // MARK: Callbacks (the loop's lock held)

    fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard body.count + bytes.count <= limit else {
            bodyTooLarge = true
            return false
        }
        if body.capacity == 0 {
            // One allocation for the whole body when the server announced its length (the limit
            // was checked against that length already: CURLOPT_MAXFILESIZE_LARGE).
            var announced: curl_off_t = -1
            _ = CCurlShims_easy_getinfo_off_t(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced)
            body.reserveCapacity(max(bytes.count, min(Int(announced), limit)))
        }
        body.append(contentsOf: bytes)
        return true
    }

    fileprivate func receiveHeader(_ bytes: UnsafeRawBufferPointer) {
        // One header line per call, CRLF included; split on the first colon without making a
        // String of the whole line first.
        if bytes.count >= 5, bytes[0] == UInt8(ascii: "H"), bytes[1] == UInt8(ascii: "T"),
            bytes[2] == UInt8(ascii: "T"),
            bytes[3] == UInt8(ascii: "P"), bytes[4] == UInt8(ascii: "/")
        {
            headers.removeAll(keepingCapacity: true)  // a new response (after 1xx or a proxy's CONNECT answer)
            return
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return }
        if headers.capacity == 0 { headers.reserveCapacity(12) }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        var start = colon + 1
        var end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        headers.append(
            (
                String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<colon]), as: UTF8.self),
                String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            )
        )
    }

    // MARK: Outcome (the loop's lock held)

    /// Whether the transfer should run once more, on a new connection, after failing with `code`,
    /// and if so sets it up for that (the caller adds the handle to the multi handle again).
    ///
    /// Only when sending failed on a kept-alive connection and nothing of an answer came back: the
    /// server closed the connection while it sat idle, so it cannot have read the whole request, and
    /// sending it again is safe whatever the method. curl 7.88 takes such a connection for alive when
    /// the server said goodbye with a TLS close_notify (libmicrohttpd with GnuTLS does): it peeks one
    /// byte, the alert, before reusing the connection. Only once per request.
    func prepareResend(after code: CURLcode) -> Bool {
        guard code == CURLE_SEND_ERROR, !resent, !isCancellationRequested, body.isEmpty, !bodyTooLarge else {
            return false
        }
        var newConnections = 0
        var headerBytes = 0
        _ = CCurlShims_easy_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &newConnections)
        _ = CCurlShims_easy_getinfo_long(handle, CURLINFO_HEADER_SIZE, &headerBytes)
        guard newConnections == 0, headerBytes == 0 else { return false }
        resent = true
        headers.removeAll()
        errorBuffer.update(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        return CCurlShims_easy_setopt_long(handle, CURLOPT_FRESH_CONNECT, 1) == CURLE_OK
    }

    /// The response, or the typed error for a curl result.
    func outcome(_ code: CURLcode) -> Result<HTTPResponse, HTTPClientError> {
        if code == CURLE_OK {
            var status = 0
            _ = CCurlShims_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
            let response = HTTPResponse(status: status, headers: headers, body: body)
            body = []
            return .success(response)
        }
        return .failure(error(for: code))
    }

    /// The typed error for a failed transfer: each step below recognises its kind of failure or passes.
    private func error(for code: CURLcode) -> HTTPClientError {
        if bodyTooLarge || code == CURLE_FILESIZE_EXCEEDED {
            return HTTPClientError(
                .responseTooLarge,
                "\(summary): the answer is larger than \(limit) bytes (maximumResponseBodyBytes); refused"
            )
        }
        if isCancellationRequested || code == CURLE_ABORTED_BY_CALLBACK { return cancelledError() }
        let detail = String(cString: errorBuffer)
        let curlText = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        return timeoutError(code) ?? tlsSetupError(code, curlText) ?? clientCertificateRejection(code, curlText)
            ?? connectionError(code, curlText)
    }

    private var host: String { request.url.host ?? "" }

    /// A timeout, told apart by how far the exchange got (TCP connect, TLS handshake, answer).
    private func timeoutError(_ code: CURLcode) -> HTTPClientError? {
        guard code == CURLE_OPERATION_TIMEDOUT else { return nil }
        let seconds = String(format: "%g", timeout)
        var handshaken: curl_off_t = 0
        _ = CCurlShims_easy_getinfo_off_t(handle, CURLINFO_APPCONNECT_TIME_T, &handshaken)
        if isHTTPS && tlsReport.pointee.hello_sent != 0 && handshaken == 0 {
            return HTTPClientError(
                .timeout,
                "\(summary): the TLS handshake with \(host) did not finish within \(seconds) s"
            )
        }
        if isHTTPS && tlsReport.pointee.hello_sent == 0 {
            return HTTPClientError(.timeout, "\(summary): no connection to \(host) within \(seconds) s")
        }
        return HTTPClientError(.timeout, "\(summary): no complete answer within \(seconds) s")
    }

    /// The server certificate as the TLS report saw it, for messages.
    private var serverCertificateDescription: String {
        let subject = withUnsafeBytes(of: &tlsReport.pointee.subject) {
            String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
        }
        let issuer = withUnsafeBytes(of: &tlsReport.pointee.issuer) {
            String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
        }
        return subject.isEmpty
            ? "the server certificate" : "the server certificate '\(subject)' (issued by '\(issuer)')"
    }

    /// An untrusted or misnamed server certificate, an unusable CA file or client identity.
    private func tlsSetupError(_ code: CURLcode, _ curlText: String) -> HTTPClientError? {
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION:
            let serverCertificate = serverCertificateDescription
            let verifyError = tlsReport.pointee.verify_error
            if verifyError != 0 {
                let why = String(cString: CCurlShims_verify_error_string(verifyError))
                return HTTPClientError(
                    .untrustedServerCertificate,
                    "\(summary): \(serverCertificate) is not trusted (\(why)); trust its CA (a provider's "
                        + "trustedCAFile parameter) or check the URL"
                )
            }
            let lowered = curlText.lowercased()
            if lowered.contains("subject name") || lowered.contains("does not match")
                || lowered.contains("no alternative")
            {
                return HTTPClientError(
                    .serverHostnameMismatch,
                    "\(summary): \(serverCertificate) does not name the host '\(host)'; use a host name the "
                        + "certificate was issued for (\(curlText))"
                )
            }
            return HTTPClientError(
                .untrustedServerCertificate,
                "\(summary): \(serverCertificate) is not trusted (\(curlText))"
            )
        case CURLE_SSL_CACERT_BADFILE:
            return HTTPClientError(.fileSystem, "\(summary): the CA file cannot be used (\(curlText))")
        case CURLE_SSL_CERTPROBLEM:
            return HTTPClientError(
                .tls,
                "\(summary): the TLS client identity cannot be used (the key does not match the certificate, or its "
                    + "type is not usable for TLS)"
            )
        default:
            return nil
        }
    }

    /// The alerts a server sends when it refuses a client certificate, by number.
    private static let rejectingAlerts = [
        116: "certificate required", 42: "bad certificate", 43: "unsupported certificate", 44: "certificate revoked",
        45: "certificate expired", 46: "certificate unknown", 48: "unknown CA", 49: "access denied",
        40: "handshake failure",
    ]

    /// The same alerts as OpenSSL words them in curl's error text.
    private static let rejectionTexts = [
        "alert certificate required", "alert bad certificate", "alert unknown ca", "alert certificate unknown",
        "alert access denied", "alert unsupported certificate", "alert certificate expired",
        "alert certificate revoked",
    ]

    /// A server that refused the client certificate.
    ///
    /// It says so with an alert (certificate_required 116, bad_certificate 42, unsupported_certificate
    /// 43, certificate_revoked 44, certificate_expired 45, certificate_unknown 46, unknown_ca 48,
    /// access_denied 49). Under TLS 1.3 the alert comes after the client finished its side of the
    /// handshake, and a server that closes at once may reset the connection before the alert is read:
    /// a server that asked for a certificate and then hung up without answering refused it too.
    private func clientCertificateRejection(_ code: CURLcode, _ curlText: String) -> HTTPClientError? {
        let sent =
            clientSubject.map { "the client certificate '\($0)' was sent" }
            ?? "no client certificate was configured (set clientIdentity / --client-identity)"
        let alert = Int(tlsReport.pointee.alert_received)
        let requested = tlsReport.pointee.certificate_requested != 0
        let dropped = [CURLE_SSL_CONNECT_ERROR, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING].contains(code)
        if let name = Self.rejectingAlerts[alert], alert != 40 || requested {
            return HTTPClientError(
                .clientCertificateRejected,
                "\(summary): \(host) refused the TLS client certificate with the alert '\(name)': \(sent)"
            )
        }
        let lowered = curlText.lowercased()
        if dropped, Self.rejectionTexts.contains(where: lowered.contains) {
            return HTTPClientError(
                .clientCertificateRejected,
                "\(summary): \(host) refused the TLS client certificate: \(sent) (\(curlText))"
            )
        }
        if dropped, requested, alert < 0 {
            return HTTPClientError(
                .clientCertificateRejected,
                "\(summary): \(host) asked for a TLS client certificate and closed the connection without answering, "
                    + "so it refused it: \(sent) (\(curlText))"
            )
        }
        return nil
    }

    /// What is left: the connection could not be made or broke off.
    private func connectionError(_ code: CURLcode, _ curlText: String) -> HTTPClientError {
        switch code {
        case CURLE_SSL_CONNECT_ERROR:
            return HTTPClientError(.tls, "\(summary): the TLS handshake with \(host) failed (\(curlText))")
        case CURLE_COULDNT_CONNECT:
            return HTTPClientError(
                .network,
                "\(summary): the connection was refused; is the server running? (\(curlText))"
            )
        case CURLE_COULDNT_RESOLVE_HOST:
            return HTTPClientError(.network, "\(summary): the host name '\(host)' cannot be resolved")
        case CURLE_COULDNT_RESOLVE_PROXY:
            return HTTPClientError(
                .network,
                "\(summary): the proxy host name cannot be resolved (https_proxy / HTTPS_PROXY)"
            )
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return HTTPClientError(
                .network,
                "\(summary): the server closed the connection without a complete answer (\(curlText))"
            )
        default:
            return HTTPClientError(.network, "\(summary): \(curlText) (curl error \(code.rawValue))")
        }
    }
}

// MARK: libcurl callbacks: `user` is the unretained transfer, alive while the loop holds it in flight.

private let curlWriteBody: curl_write_callback = { data, size, count, user in
    guard let user else { return 0 }
    let length = size * count
    guard length > 0, let data else { return length }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

private let curlWriteHeader: curl_write_callback = { data, size, count, user in
    guard let user else { return 0 }
    let length = size * count
    guard length > 0, let data else { return length }
    Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue().receiveHeader(
        UnsafeRawBufferPointer(start: data, count: length)
    )
    return length
}
