import Foundation

/// The end of a journal's hash chain: how many entries it holds and the hash of the last one.
///
/// Publishing a head (a transparency-log checkpoint) lets anyone later prove that the history up to
/// that entry did not change: `certsign journal verify` recomputes every hash from the first entry.
public struct JournalHead: Sendable, Hashable, CustomStringConvertible {
    /// The number of entries in the chain (signatures, updates and removals).
    public var count: Int64
    /// The SHA-256 hash of the last entry (32 zero bytes for an empty journal).
    public var hash: [UInt8]

    /// Creates a head.
    public init(count: Int64, hash: [UInt8]) {
        self.count = count
        self.hash = hash
    }

    /// The head of an empty journal.
    public static let empty = JournalHead(count: 0, hash: [UInt8](repeating: 0, count: 32))

    /// The hash as 64 lower-case hex digits.
    public var hashHex: String { hash.map { String(format: "%02x", $0) }.joined() }

    /// `COUNT HASH`.
    public var description: String { "\(count) \(hashHex)" }
}
