/// The unique identifier of a certificate provider (SAP's `getProviderID`).
///
/// An open set: the core declares no IDs; each provider module declares its own as a static member
/// in an extension (`extension ProviderID { public static let fmpDSS: ProviderID = "fmp-dss" }`), and
/// apps add theirs the same way, in reverse-DNS form for third parties (`com.example.smartcard`).
public struct ProviderID: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral, Codable {
    /// The ID as registered and shown to users.
    public let rawValue: String

    /// Creates an ID from its string form.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// Creates an ID from a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The ID as registered.
    public var description: String { rawValue }

    /// Orders IDs by their string form.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Decodes an ID from a single string.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes the ID as a single string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
