public import Foundation
public import JSON
public import Secrets

/// The networking a remote provider uses: one request in, one response out.
///
/// Apps bring their own networking by conforming to this protocol; the package ships
/// one, ``CurlTransport`` (libcurl), the default everywhere. Contract:
/// - a response with any HTTP status (including 4xx and 5xx) is returned, not thrown;
/// - failures to get a response are thrown as ``HTTPClientError``: `.timeout` when
///   ``HTTPRequest/timeout`` passed, `.network` for connection failures (refused, reset, dropped),
///   the TLS codes (`.untrustedServerCertificate`, `.serverHostnameMismatch`,
///   `.clientCertificateRejected`, `.tls`) when the TLS handshake fails, `.responseTooLarge` when the
///   body is over the transport's limit, `.cancelled` when the calling task was cancelled,
///   `.invalidParameter` for a URL the transport refuses (for example `http://` to a non-loopback
///   host, see ``RemoteEndpointPolicy``);
/// - the body sent is ``HTTPRequest/secretBody`` when set, else ``HTTPRequest/body``;
/// - a request is sent at most once: retrying is the caller's decision (see ``RetryPolicy``). (A
///   transport may send it again on a new connection when sending it failed on a kept-alive
///   connection the server had closed, before any answer: the server cannot have read it whole.
///   ``CurlTransport`` does.)
public protocol HTTPTransport: Sendable {
    /// Sends one request and returns the server's response.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// An HTTP method: an open set.
public struct HTTPMethod: Hashable, Sendable, CustomStringConvertible {
    /// The method token (`GET`).
    public let rawValue: String
    /// Creates a method from its token.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The method token.
    public var description: String { rawValue }

    /// `GET`: read, safe to retry.
    public static let get = HTTPMethod("GET")
    /// `HEAD`: read headers only, safe to retry.
    public static let head = HTTPMethod("HEAD")
    /// `POST`: create or act; never retried.
    public static let post = HTTPMethod("POST")
    /// `PUT`: replace.
    public static let put = HTTPMethod("PUT")
    /// `DELETE`: remove; not retried (see ``isSafeToRetry``).
    public static let delete = HTTPMethod("DELETE")

    /// Whether ``RetryPolicy`` may send the request again after a failure: `GET` and `HEAD` only.
    ///
    /// `DELETE` is idempotent in HTTP terms, but a retried delete whose first attempt succeeded
    /// answers 404, which would turn a success into an error; it is therefore not retried.
    public var isSafeToRetry: Bool { self == .get || self == .head }
}

/// One HTTP request as a plain value.
public struct HTTPRequest: Sendable, Equatable {
    /// The method (default `GET`).
    public var method: HTTPMethod
    /// The absolute URL.
    public var url: URL
    /// Header fields, in order; names are case-insensitive.
    public var headers: [(name: String, value: String)]
    /// The body, empty for none (ignored when ``secretBody`` is set).
    public var body: [UInt8]
    /// A body that carries a password, PIN or token, held in a `Secret` so that its bytes are wiped
    /// when the last copy of the request is released (after the send and any retry); when set, it is
    /// sent instead of ``body``. Set it with the `secrets:` forms of ``setJSONBody(_:secrets:)`` and
    /// ``setFormBody(_:secrets:)``.
    public var secretBody: Secret?
    /// The secrets ``secretBody`` carries, one by one (set by the `secrets:` body setters), so that a
    /// ``SecretRedactingTransport`` can cut them out of what the server answers.
    public private(set) var bodySecrets: [Secret] = []
    /// How long to wait for the whole exchange, in seconds (default 30).
    public var timeout: TimeInterval
    /// Whether the request must reach the server at most once, because it makes or uses up something
    /// there (a signing operation, an authorization): it goes on a new connection, never on a
    /// kept-alive one (default false). curl sends a request again when a kept-alive connection closes
    /// without an answer, as when the server closed it while it sat idle; a server that read the
    /// request and then lost the connection would run it twice.
    public var atMostOnce = false

    /// Creates a request.
    public init(
        method: HTTPMethod = .get,
        url: URL,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = [],
        timeout: TimeInterval = 30
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// The first value of a header (case-insensitive name), or nil.
    public func header(_ name: String) -> String? {
        headers.first { headerNamesMatch($0.name, name) }?.value
    }

    /// Sets a header, replacing every earlier value of the same name.
    public mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { headerNamesMatch($0.name, name) }
        headers.append((name, value))
    }

    /// Sets a JSON body (`Content-Type: application/json`).
    /// - Throws: `JSONError` `.unencodable` when the value holds a number JSON cannot (NaN, infinity).
    public mutating func setJSONBody(_ value: JSONValue) throws {
        body = try value.jsonBytes()
        secretBody = nil
        bodySecrets = []
        setHeader("Content-Type", "application/json")
    }

    /// Sets a JSON body some of whose string values are secrets, as ``secretBody``.
    ///
    /// Put each slot's ``SecretSlot/placeholder`` where the secret goes (`["password":
    /// .string(slot.placeholder)]`); the encoded body has each placeholder replaced by the secret,
    /// JSON-escaped, in a buffer that is wiped when the request is released. The secret never becomes
    /// a `String`.
    /// - Throws: `JSONError` `.unencodable` when the value holds a number JSON cannot (NaN, infinity).
    public mutating func setJSONBody(_ value: JSONValue, secrets: [SecretSlot]) throws {
        var encoded = try value.jsonBytes()
        secretBody = HTTPRequest.substituting(secrets, into: &encoded) { secret, output in
            secret.withUnsafeBytes { bytes in JSONEscaping.appendEscaped(bytes, to: &output) }
        }
        bodySecrets = secrets.map(\.secret)
        body = []
        setHeader("Content-Type", "application/json")
    }

    /// Sets an `application/x-www-form-urlencoded` body some of whose values are secrets, as
    /// ``secretBody``: a field's value is a slot's ``SecretSlot/placeholder`` where the secret goes.
    public mutating func setFormBody(_ fields: [(name: String, value: String)], secrets: [SecretSlot]) {
        var encoded = Array(HTTPRequest.formEncoded(fields).utf8)
        secretBody = HTTPRequest.substituting(secrets, into: &encoded) { secret, output in
            secret.withUnsafeBytes { bytes in
                for byte in bytes {
                    if HTTPRequest.isUnreserved(byte) {
                        output.append(byte)
                    } else {
                        let hex = Array("0123456789ABCDEF".utf8)
                        output.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
                    }
                }
            }
        }
        bodySecrets = secrets.map(\.secret)
        body = []
        setHeader("Content-Type", "application/x-www-form-urlencoded")
    }

    /// The bytes that go on the wire: ``secretBody``'s when set, else ``body`` (copied into a `Secret`
    /// only when one was set: callers read the secret with `withUnsafeBytes`).
    var bodyCount: Int { secretBody?.count ?? body.count }

    /// Calls `body` with the bytes to send (from ``secretBody`` when set).
    func withBodyBytes<R>(_ read: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let secretBody { return try secretBody.withUnsafeBytes(read) }
        return try body.withUnsafeBytes(read)
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Replaces every slot's placeholder in `encoded` by the secret's bytes (as `append` writes them)
    /// into a new buffer that becomes a `Secret`; `encoded` and the scratch buffer are wiped.
    private static func substituting(
        _ slots: [SecretSlot],
        into encoded: inout [UInt8],
        append: (Secret, inout [UInt8]) -> Void
    ) -> Secret {
        var output: [UInt8] = []
        output.reserveCapacity(encoded.count + slots.reduce(0) { $0 + 3 * $1.secret.count })
        let placeholders = slots.map { (Array($0.placeholder.utf8), $0.secret) }
        // Each placeholder starts with "s": jump from one "s" to the next (memchr) and copy the runs
        // between replacements whole.
        encoded.withUnsafeBufferPointer { source in
            guard let base = source.baseAddress else { return }
            var index = 0
            var runStart = 0
            while index < source.count,
                let found = memchr(base + index, Int32(UInt8(ascii: "s")), source.count - index)
            {
                let position = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                index = position + 1
                for (placeholder, secret) in placeholders
                where source.count - position >= placeholder.count
                    && memcmp(base + position, placeholder, placeholder.count) == 0
                {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: source[runStart..<position]))
                    append(secret, &output)
                    index = position + placeholder.count
                    runStart = index
                    break
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: source[runStart...]))
        }
        _ = Secret(wiping: &encoded)  // wipes the placeholder form (OPENSSL_cleanse) as well
        return Secret(wiping: &output)
    }

    /// Sets an `application/x-www-form-urlencoded` body from name/value pairs, in order.
    ///
    /// Names and values are percent-encoded (everything but `A–Z a–z 0–9 - . _ ~`), so UTF-8 and
    /// reserved characters survive.
    public mutating func setFormBody(_ fields: [(name: String, value: String)]) {
        body = Array(HTTPRequest.formEncoded(fields).utf8)
        secretBody = nil
        bodySecrets = []
        setHeader("Content-Type", "application/x-www-form-urlencoded")
    }

    /// Encodes name/value pairs as `application/x-www-form-urlencoded`.
    public static func formEncoded(_ fields: [(name: String, value: String)]) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        allowed.insert(charactersIn: "-._~")
        func encode(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        return fields.map { "\(encode($0.name))=\(encode($0.value))" }.joined(separator: "&")
    }

    /// Requests are equal when method, URL, headers (in order), body, secret body and timeout are.
    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.body == rhs.body && lhs.secretBody == rhs.secretBody
            && lhs.timeout == rhs.timeout && lhs.atMostOnce == rhs.atMostOnce
            && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

/// A secret that goes into a request body, and the placeholder that marks where.
///
/// ```swift
/// let password = HTTPRequest.SecretSlot(dssPassword)
/// try request.setJSONBody(["password": .string(password.placeholder)], secrets: [password])
/// ```
public struct SecretSlot: Sendable {
    /// The secret.
    public let secret: Secret
    /// A random marker (`secret-slot-` and 32 hex digits, unchanged by JSON and form encoding) to
    /// put where the secret goes.
    public let placeholder: String

    /// Creates a slot with a fresh random placeholder.
    public init(_ secret: Secret) {
        self.secret = secret
        var generator = SystemRandomNumberGenerator()
        let words: [UInt64] = [generator.next(), generator.next()]
        // Written in place (the prefix, then each word as 16 lower-case hex digits): a signing request
        // makes one or two slots, and formatting them with String(radix:) and joins showed in profiles.
        let prefix = SecretSlot.prefix
        placeholder = String(unsafeUninitializedCapacity: prefix.count + 32) { buffer in
            _ = buffer.initialize(from: prefix)
            var index = prefix.count
            for word in words {
                for shift in stride(from: 60, through: 0, by: -4) {
                    buffer[index] = SecretSlot.hexDigits[Int((word >> UInt64(shift)) & 0xF)]
                    index += 1
                }
            }
            return index
        }
    }

    private static let prefix = Array("secret-slot-".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)
}

/// One HTTP response as a plain value.
public struct HTTPResponse: Sendable, Equatable {
    /// The status code.
    public var status: Int
    /// Header fields; names are case-insensitive.
    public var headers: [(name: String, value: String)]
    /// The body bytes.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of a header (case-insensitive name), or nil.
    public func header(_ name: String) -> String? {
        headers.first { headerNamesMatch($0.name, name) }?.value
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// Responses are equal when status, headers (in order) and body are.
    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body
            && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

/// Whether two header names are the same, ignoring ASCII case (names are ASCII tokens, RFC 9110
/// §5.1; other bytes must match exactly). Compares UTF-8 bytes in place: Foundation's
/// `caseInsensitiveCompare` bridged through NSString and cost ~2% of a client round trip.
func headerNamesMatch(_ lhs: String, _ rhs: String) -> Bool {
    var lhs = lhs
    var rhs = rhs
    return lhs.withUTF8 { left in
        rhs.withUTF8 { right in
            guard left.count == right.count else { return false }
            for index in 0..<left.count {
                let a = left[index]
                let b = right[index]
                if a == b { continue }
                // Equal ignoring case only when both are the same ASCII letter.
                guard a | 0x20 == b | 0x20, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(a | 0x20) else {
                    return false
                }
            }
            return true
        }
    }
}
