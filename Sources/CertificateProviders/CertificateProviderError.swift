/// The one error type of this package: a ``Code`` that tells the caller what to do and a reason a
/// user can act on. When OpenSSL was involved, the strings drained from its error queue are kept
/// for ``debugDescription`` (they are diagnostics, not part of the API).
///
/// Two errors are equal when their codes are equal, so tests and callers can match on
/// `error == .wrongPassword` style comparisons through ``Code``. No secret (password, PIN, key
/// material) is ever put into an error.
public struct CertificateProviderError: CodedError, CustomDebugStringConvertible, OpenSSLErrorReporting {
    /// What went wrong, as an open set of static members (new modules may add their own).
    public struct Code: ErrorCode {
        /// The stable name of the code, used in logs and JSON output.
        public let rawValue: String

        /// Creates a code; modules that need a new failure class declare a static member with it.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// A code of this package: the name of a case of a module's own code names (an enum whose
        /// case names are the raw values), so each name is written once and a typo does not compile.
        package init<Name: RawRepresentable<String>>(_ name: Name) { self.rawValue = name.rawValue }

        /// The core's codes.
        init(_ name: CoreCodeName) { self.rawValue = name.rawValue }

        /// No provider is registered under the requested ID.
        public static let providerNotFound = Code(.providerNotFound)
        /// A provider was registered twice under one ID.
        public static let providerAlreadyRegistered = Code(.providerAlreadyRegistered)
        /// The provider does not implement this optional part of the contract.
        public static let unsupportedOperation = Code(.unsupportedOperation)
        /// A parameter is missing, of the wrong type, or has a value the provider rejects.
        public static let invalidParameter = Code(.invalidParameter)
        /// The password or PIN does not open the file, store or key.
        public static let wrongPassword = Code(.wrongPassword)
        /// A password is needed (to unlock a stored key) and none was given.
        public static let passwordRequired = Code(.passwordRequired)
        /// Input bytes are not what they claim to be: corrupt, truncated, empty or of another format.
        public static let malformedInput = Code(.malformedInput)
        /// The algorithm (key type, curve, cipher, digest) is not supported.
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// The file or identity holds no private key.
        public static let noPrivateKey = Code(.noPrivateKey)
        /// The private key matches none of the certificates.
        public static let keyCertificateMismatch = Code(.keyCertificateMismatch)
        /// Nothing is stored under the requested name.
        public static let notStored = Code(.notStored)
        /// Something is already stored under the requested name.
        public static let alreadyExists = Code(.alreadyExists)
        /// The local store or journal is damaged or not ours.
        public static let storeCorrupted = Code(.storeCorrupted)
        /// A file-system operation failed (permissions, disk full, missing directory).
        public static let fileSystem = Code(.fileSystem)
        /// The server did not accept the credentials (after refresh and re-authentication).
        public static let authenticationFailed = Code(.authenticationFailed)
        /// The server understood the request and refused it.
        public static let serverRejected = Code(.serverRejected)
        /// The network failed, or the server answered something that is not the protocol.
        public static let network = Code(.network)
        /// The operation did not finish in the configured time.
        public static let timeout = Code(.timeout)
        /// The operation was cancelled by the caller.
        public static let cancelled = Code(.cancelled)
        /// An OpenSSL call failed in a way none of the other codes describes.
        public static let cryptoFailure = Code(.cryptoFailure)
        /// The server's TLS certificate does not chain to a trusted CA (or is expired, revoked, or
        /// self-signed): trust its CA with `trustedCAFile`, or check that the URL points at the right server.
        public static let untrustedServerCertificate = Code(.untrustedServerCertificate)
        /// The server's TLS certificate is valid but names another host than the URL's: use the name the
        /// certificate was issued for.
        public static let serverHostnameMismatch = Code(.serverHostnameMismatch)
        /// The server refused the TLS client certificate, or demanded one and none was configured: set
        /// `clientIdentity` to an identity the server's CA issued.
        public static let clientCertificateRejected = Code(.clientCertificateRejected)
        /// Another TLS failure (protocol version, cipher, a client identity that cannot be used).
        public static let tls = Code(.tls)
        /// The server's answer is larger than the transport accepts (`maximumResponseBodyBytes`).
        public static let responseTooLarge = Code(.responseTooLarge)
    }

    /// What went wrong.
    public var code: Code
    /// A human sentence saying what went wrong and, where possible, what to do.
    public var reason: String
    /// The OpenSSL error queue drained when the failure happened, oldest first (may be empty):
    /// shown by ``debugDescription`` only.
    package var openSSLErrors: [String]
    /// Whether asking again later may succeed (the service answered 5xx, or did not answer in time):
    /// a loop that polls an operation (``ApprovalWait``) asks again on its next poll instead of failing
    /// (default false).
    package var isTransient = false

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: what went wrong.
    ///   - reason: a sentence a user can act on; never include a secret.
    public init(_ code: Code, _ reason: String) {
        self.init(code, reason, openSSLErrors: [])
    }

    /// Creates an error that keeps the strings drained from OpenSSL's error queue.
    package init(_ code: Code, _ reason: String, openSSLErrors: [String]) {
        self.code = code
        self.reason = reason
        self.openSSLErrors = openSSLErrors
    }

    /// The same error, marked as ``isTransient``.
    package func markedTransient() -> Self {
        var copy = self
        copy.isTransient = true
        return copy
    }

    /// ``description``, with OpenSSL's error lines when there are any (for logs and debugging).
    public var debugDescription: String { descriptionWithOpenSSLErrors }

    /// Matches an error against a code: `error ~= .wrongPassword`.
    public static func ~= (code: Code, error: Self) -> Bool { error.code == code }
}

extension CertificateProviderError {
    /// A ``Code/providerNotFound`` error with the given reason.
    public static func providerNotFound(_ reason: String) -> Self { .init(.providerNotFound, reason) }
    /// A ``Code/unsupportedOperation`` error with the given reason.
    public static func unsupportedOperation(_ reason: String) -> Self { .init(.unsupportedOperation, reason) }
    /// A ``Code/invalidParameter`` error with the given reason.
    public static func invalidParameter(_ reason: String) -> Self { .init(.invalidParameter, reason) }
    /// A ``Code/malformedInput`` error with the given reason.
    public static func malformedInput(_ reason: String) -> Self { .init(.malformedInput, reason) }
}

/// The names of the core's codes: each case's name is the raw value of its ``CertificateProviderError/Code``.
enum CoreCodeName: String {
    case providerNotFound, providerAlreadyRegistered, unsupportedOperation, invalidParameter, wrongPassword,
        passwordRequired, malformedInput, unsupportedAlgorithm, noPrivateKey, keyCertificateMismatch, notStored,
        alreadyExists, storeCorrupted, fileSystem, authenticationFailed, serverRejected, network, timeout, cancelled,
        cryptoFailure, untrustedServerCertificate, serverHostnameMismatch, clientCertificateRejected, tls,
        responseTooLarge
}

/// An error that keeps the strings drained from OpenSSL's error queue beside its one-line
/// description: ``CertificateProviderError`` and the Signing module's `VerificationFailure`, which
/// show them the same way.
package protocol OpenSSLErrorReporting: CustomStringConvertible {
    /// The OpenSSL error queue drained when the failure happened, oldest first (may be empty).
    var openSSLErrors: [String] { get }
}

extension OpenSSLErrorReporting {
    /// `description`, with OpenSSL's error lines when there are any: `code: reason (OpenSSL: line;
    /// line)`, the `debugDescription` of the conforming errors (for logs and debugging).
    package var descriptionWithOpenSSLErrors: String {
        if openSSLErrors.isEmpty { return description }
        return "\(description) (OpenSSL: \(openSSLErrors.joined(separator: "; ")))"
    }
}
