public import CodedErrors

/// The HTTP client's error: a ``Code`` that says what failed and a reason a user can act on (it
/// names the request, the host and what to change). The client depends on nothing of the package's
/// core; a caller that speaks `HTTPClientError` (every remote provider) converts it with
/// `RemoteProviderSupport`'s `HTTPClientError(_:)`, which keeps the code's name.
public struct HTTPClientError: CodedError {
    /// What went wrong, as an open set of static members.
    public struct Code: ErrorCode {
        /// The stable name of the code, used in logs and JSON output (the same name as the
        /// `HTTPClientError` code it becomes).
        public let rawValue: String

        /// Creates a code.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// The network failed: no connection, a reset, a host name that does not resolve.
        public static let network = Code("network")
        /// The exchange did not finish within the request's timeout.
        public static let timeout = Code("timeout")
        /// The request was cancelled (its task, or the transport was released).
        public static let cancelled = Code("cancelled")
        /// The server's TLS certificate does not chain to a trusted CA (or is expired, revoked, or
        /// self-signed): trust its CA with `trustedCAFile`, or check that the URL points at the
        /// right server.
        public static let untrustedServerCertificate = Code("untrustedServerCertificate")
        /// The server's TLS certificate is valid but names another host than the URL's.
        public static let serverHostnameMismatch = Code("serverHostnameMismatch")
        /// The server refused the TLS client certificate, or demanded one and none was configured.
        public static let clientCertificateRejected = Code("clientCertificateRejected")
        /// Another TLS failure (protocol version, cipher, a client identity that cannot be used).
        public static let tls = Code("tls")
        /// The server's answer is larger than the transport accepts.
        public static let responseTooLarge = Code("responseTooLarge")
        /// A URL, header or setting the client refuses (a scheme other than http/https, plain
        /// `http://` without the opt-in, a header with a line break).
        public static let invalidParameter = Code("invalidParameter")
        /// A file the client was given (a CA file) does not hold what it should.
        public static let malformedInput = Code("malformedInput")
        /// A file the client was given cannot be read.
        public static let fileSystem = Code("fileSystem")
    }

    /// What went wrong.
    public var code: Code
    /// A human sentence saying what went wrong and, where possible, what to do.
    public var reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// An ``Code/invalidParameter`` error.
    public static func invalidParameter(_ reason: String) -> Self { .init(.invalidParameter, reason) }
    /// A ``Code/malformedInput`` error.
    public static func malformedInput(_ reason: String) -> Self { .init(.malformedInput, reason) }
}
