/// What one refresh did with one list: downloaded and stored it, found it unchanged, kept the
/// verified copy because the new one was refused or could not be had, or had nothing to keep.
public struct TrustedListRefreshOutcome: Sendable, Hashable {
    /// What happened: an open set, compared by value.
    public struct State: Hashable, Sendable, CustomStringConvertible {
        /// The state's name.
        public let rawValue: String
        /// Creates a state.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The state's name.
        public var description: String { rawValue }

        /// A new copy was downloaded, verified and stored.
        public static let fetched = State("fetched")
        /// The server said the stored copy is current (304), and it verified again.
        public static let notModified = State("notModified")
        /// The verified copy stays: the new one was refused or could not be downloaded (see the reason).
        public static let kept = State("kept")
        /// No copy: the list was refused or could not be downloaded, and none was stored before.
        public static let refused = State("refused")
    }

    /// The list's territory (`EU` for the list of the lists).
    public let territory: String
    /// Its file name in the cache.
    public let name: String
    /// Where it was asked for.
    public let url: String
    /// What happened.
    public let state: State
    /// Why a list was kept or refused: which check failed or what the server did.
    public let reason: String?

    /// Whether the cache holds a current verified copy of the list after the refresh.
    public var succeeded: Bool { state == .fetched || state == .notModified }

    /// Creates an outcome.
    public init(territory: String, name: String, url: String, state: State, reason: String? = nil) {
        self.territory = territory
        self.name = name
        self.url = url
        self.state = state
        self.reason = reason
    }
}
