public import CodedErrors
public import Foundation

/// Why a trusted list (a LOTL or a TL) was refused: it could not be read, it is not a well-formed
/// ETSI TS 119 612 list within the limits, or its signature, signer or `NextUpdate` is wrong.
public struct TrustedListError: CodedError, LocalizedError, Hashable {
    /// What went wrong: an open set, compared by value.
    public struct Code: ErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Creates a code.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// The file could not be read (missing, a directory, no permission).
        public static let unreadable = Code("unreadable")
        /// The list passes a limit of ``TrustedListLimits`` (bytes, elements, depth, services).
        public static let limitExceeded = Code("limitExceeded")
        /// The list has a DOCTYPE: DTDs and entities are never read, so entity bombs and external
        /// entities are refused before any is declared.
        public static let entitiesRefused = Code("entitiesRefused")
        /// The bytes are not well-formed XML.
        public static let malformedXML = Code("malformedXML")
        /// The root element is not ETSI TS 119 612 v2's `TrustServiceStatusList`.
        public static let wrongNamespace = Code("wrongNamespace")
        /// A field the list must have is missing or unreadable (a date, a certificate, a number).
        public static let invalidList = Code("invalidList")
        /// The list carries no enveloped XML signature.
        public static let unsigned = Code("unsigned")
        /// The signature does not hold: the list changed after signing, or the signature does not
        /// cover the whole list.
        public static let signatureInvalid = Code("signatureInvalid")
        /// The signature holds for none of the signer certificates given (another key signed it).
        public static let wrongSigner = Code("wrongSigner")
        /// A TL given beside a LOTL that has no pointer to its territory (so no certificate to check it with).
        public static let unlisted = Code("unlisted")
        /// No signer certificate was given to check the list against.
        public static let noSigners = Code("noSigners")
        /// The list's `NextUpdate` is before the time it is used at (or it has none: a closed list).
        public static let expired = Code("expired")
        /// A list could not be downloaded: the server is unreachable, answered an error status, or
        /// its URL is refused (no scheme, clear-text `http://` to another host without opt-in).
        public static let downloadFailed = Code("downloadFailed")
        /// The trusted-list cache holds no verified list of the lists yet: it must be refreshed first.
        public static let cacheEmpty = Code("cacheEmpty")
        /// The trusted-list cache directory or one of its files cannot be read or written.
        public static let cacheUnusable = Code("cacheUnusable")
    }

    /// What went wrong.
    public let code: Code
    /// A sentence saying what failed, naming the list.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The reason, for `localizedDescription`.
    public var errorDescription: String? { reason }
}
