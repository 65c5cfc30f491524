public import CodedErrors
public import Foundation

/// Why a ``ValidationReport`` could not be written.
public struct ValidationReportError: CodedError, LocalizedError, Hashable {
    /// What went wrong: an open set, compared by value.
    public struct Code: ErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Creates a code.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// libxml2 could not build or serialise the document (it fails only when memory runs out).
        public static let xmlFailure = Code("xmlFailure")
    }

    /// What went wrong.
    public let code: Code
    /// A sentence saying what failed.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The reason, for `localizedDescription`.
    public var errorDescription: String? { reason }
}
