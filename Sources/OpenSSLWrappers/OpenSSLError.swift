/// A failure inside an OpenSSL wrapper: what failed, in words, and OpenSSL's error queue at that
/// moment. The wrappers know nothing of the package's public error type; the modules above turn
/// this into theirs where the call leaves the wrapper.
package struct OpenSSLError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it was, so the caller can pick its own error code.
    package enum Kind: Sendable, Hashable {
        /// The input bytes are not what they should be (corrupt, truncated, too large).
        case malformedInput
        /// OpenSSL refused an operation on valid input (allocation, encoding).
        case cryptoFailure
        /// OpenSSL has no implementation of the algorithm asked for.
        case unsupportedAlgorithm
        /// The password does not decrypt the input.
        case wrongPassword
    }

    /// What kind of failure it was.
    package let kind: Kind
    /// The failure in words, naming the thing it is about.
    package let reason: String
    /// OpenSSL's error queue, oldest first.
    package let openSSLErrors: [String]

    /// A failure of `kind` that takes OpenSSL's error queue with it (the queue is drained).
    package init(_ kind: Kind, _ reason: String) {
        self.init(kind, reason, openSSLErrors: OpenSSLErrorQueue.drain())
    }

    /// A failure of `kind` with the given OpenSSL errors.
    package init(_ kind: Kind, _ reason: String, openSSLErrors: [String]) {
        self.kind = kind
        self.reason = reason
        self.openSSLErrors = openSSLErrors
    }

    /// The reason, followed by OpenSSL's errors when there are any.
    package var description: String {
        openSSLErrors.isEmpty ? reason : "\(reason) (OpenSSL: \(openSSLErrors.joined(separator: "; ")))"
    }
}
