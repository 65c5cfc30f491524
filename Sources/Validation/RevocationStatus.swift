import CMS
public import Foundation

/// Whether a certificate was revoked, and where the answer came from; or, for a signer, the summary
/// of every certificate of its path (``certificates``).
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
    /// For a signer's summary: one status per certificate checked, the signer's path first (signer,
    /// then each CA up to, not including, the trust anchor), then the time-stamping authority's path.
    /// The summary is `.revoked` when any of them is (its time and source are that certificate's),
    /// else `.unknown` when any is, else `.good`. Empty for a single certificate's answer.
    public let certificates: [CertificateRevocationStatus]

    /// Creates a status.
    public init(
        state: State,
        revocationTime: Date? = nil,
        source: String,
        certificates: [CertificateRevocationStatus] = []
    ) {
        self.state = state
        self.revocationTime = revocationTime
        self.source = source
        self.certificates = certificates
    }

    /// `.unknown` for a certificate of `issuer` that nothing decided, its source listing what was
    /// tried (when nothing was: that no CRL of the issuer was given).
    package static func undecided(issuer: String, tried: [String]) -> RevocationStatus {
        RevocationStatus(
            state: .unknown,
            source: tried.isEmpty ? "no CRL for '\(issuer)' was given" : tried.joined(separator: "; ")
        )
    }

    /// A one-line summary for logs and command-line output.
    public var description: String {
        "\(state)\(revocationTime.map { " since \($0)" } ?? "") (\(source))"
    }
}
