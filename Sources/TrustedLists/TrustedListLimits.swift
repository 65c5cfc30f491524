/// How much one trusted list may hold before it is refused unread: loading stays bounded in time
/// and memory whatever the file is. The defaults are far above the largest EU lists published.
public struct TrustedListLimits: Sendable, Hashable {
    /// The largest file read, in bytes (default 32 MiB); a larger file is refused before it is read.
    public var maximumBytes: Int
    /// The most XML elements in one list (default 2,000,000).
    public var maximumElements: Int
    /// The deepest nesting of elements (default 64; ETSI TS 119 612 lists nest about 15 deep).
    public var maximumDepth: Int
    /// The most trust services (`TSPService` elements) in one list (default 10,000).
    public var maximumServices: Int

    /// The defaults.
    public init(
        maximumBytes: Int = 32 << 20,
        maximumElements: Int = 2_000_000,
        maximumDepth: Int = 64,
        maximumServices: Int = 10_000
    ) {
        self.maximumBytes = maximumBytes
        self.maximumElements = maximumElements
        self.maximumDepth = maximumDepth
        self.maximumServices = maximumServices
    }
}
