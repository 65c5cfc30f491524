public import Foundation

/// Whether a signer's certificate was revoked, and where the answer came from.
public struct RevocationStatus: Sendable, Hashable, CustomStringConvertible {
    /// The answer: an open set.
    public struct State: Hashable, Sendable, CustomStringConvertible {
        /// The stable name (`good`, `revoked`, `unknown`).
        public let rawValue: String
        /// Creates a state.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// A one-line summary for logs and command-line output.
        public var description: String { rawValue }

        /// Not revoked, according to a current, verified answer.
        public static let good = State("good")
        /// Revoked at ``RevocationStatus/revocationTime``.
        public static let revoked = State("revoked")
        /// No usable answer could be had.
        public static let unknown = State("unknown")
    }

    /// The answer.
    public let state: State
    /// When the certificate was revoked (for `.revoked`).
    public let revocationTime: Date?
    /// Where the answer came from, in words (`OCSP http://…`, `CRL file`, …).
    public let source: String

    /// Creates a status.
    public init(state: State, revocationTime: Date? = nil, source: String) {
        self.state = state
        self.revocationTime = revocationTime
        self.source = source
    }

    /// A one-line summary for logs and command-line output.
    public var description: String {
        "\(state)\(revocationTime.map { " since \($0)" } ?? "") (\(source))"
    }
}
