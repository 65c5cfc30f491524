import CertificateProviders
public import Foundation

/// The networking a remote provider uses: one request in, one response out.
///
/// Apps bring their own networking by conforming to this protocol; the package ships
/// ``URLSessionTransport``. Contract:
/// - a response with any HTTP status (including 4xx and 5xx) is returned, not thrown;
/// - failures to get a response are thrown as `CertificateProviderError`: `.timeout` when
///   ``HTTPRequest/timeout`` passed, `.network` for connection failures (refused, reset, dropped,
///   TLS), `.cancelled` when the calling task was cancelled, `.invalidParameter` for a URL the
///   transport refuses (for example `http://` to a non-loopback host, see ``RemoteEndpointPolicy``);
/// - a request is sent at most once: retrying is the caller's decision (see ``RetryPolicy``).
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
    /// The body, empty for none.
    public var body: [UInt8]
    /// How long to wait for the whole exchange, in seconds (default 30).
    public var timeout: TimeInterval

    /// Creates a request.
    public init(method: HTTPMethod = .get, url: URL, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
                timeout: TimeInterval = 30) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// The first value of a header (case-insensitive name), or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Sets a header, replacing every earlier value of the same name.
    public mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        headers.append((name, value))
    }

    /// Sets a JSON body (`Content-Type: application/json`).
    /// - Throws: `.invalidParameter` when the value cannot be encoded (never for ``JSONValue``).
    public mutating func setJSONBody(_ value: JSONValue) throws {
        body = try value.jsonBytes()
        setHeader("Content-Type", "application/json")
    }

    /// Sets an `application/x-www-form-urlencoded` body from name/value pairs, in order.
    ///
    /// Names and values are percent-encoded (everything but `A–Z a–z 0–9 - . _ ~`), so UTF-8 and
    /// reserved characters survive.
    public mutating func setFormBody(_ fields: [(name: String, value: String)]) {
        body = Array(HTTPRequest.formEncoded(fields).utf8)
        setHeader("Content-Type", "application/x-www-form-urlencoded")
    }

    /// Encodes name/value pairs as `application/x-www-form-urlencoded`.
    public static func formEncoded(_ fields: [(name: String, value: String)]) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        allowed.insert(charactersIn: "-._~")
        func encode(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        return fields.map { "\(encode($0.name))=\(encode($0.value))" }.joined(separator: "&")
    }

    /// Requests are equal when method, URL, headers (in order), body and timeout are.
    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.body == rhs.body && lhs.timeout == rhs.timeout
            && lhs.headers.map(\.name) == rhs.headers.map(\.name) && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
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
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The body parsed as JSON.
    /// - Throws: `.network` naming `context` when the body is not JSON (the server did not speak
    ///   the protocol).
    public func json(context: String) throws -> JSONValue {
        do {
            return try JSONValue(parsing: body)
        } catch {
            throw CertificateProviderError(.network, "\(context): the server answered HTTP \(status) with a body that is not JSON (\(body.count) bytes)")
        }
    }

    /// Responses are equal when status, headers (in order) and body are.
    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body
            && lhs.headers.map(\.name) == rhs.headers.map(\.name) && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}
