public import CodedErrors

/// Why JSON could not be read or written: a code a program can switch on and a sentence that says
/// where (`the data is not valid JSON: expected ':' at byte 17`,
/// `FMP sign: field 'certificates[0].id' must be an integer, found string`).
///
/// The module throws only this type, so it depends on nothing; a caller that speaks another error
/// vocabulary maps it at its edge (a remote provider's client calls a server's malformed answer a
/// network failure, the emulator calls a malformed request malformed input).
public struct JSONError: CodedError, Hashable {
    /// The class of failure: an open set.
    public struct Code: ErrorCode {
        /// The stable name (`malformed`, …).
        public let rawValue: String
        /// Creates a code.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// The bytes are not JSON (a syntax error, invalid UTF-8, nesting too deep); the message
        /// gives the byte offset.
        public static let malformed = Code("malformed")
        /// The value cannot be written as JSON (a number that is NaN or infinite).
        public static let unencodable = Code("unencodable")
        /// The JSON is well formed but not the shape asked for (``JSONObjectReader``): a field is
        /// missing, has another type, or is not base64.
        public static let unexpectedShape = Code("unexpectedShape")
    }

    /// What failed.
    public let code: Code
    /// A sentence saying what failed and where.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message (``CodedError``'s reason).
    public var reason: String { message }

    /// The message.
    public var description: String { message }
}
