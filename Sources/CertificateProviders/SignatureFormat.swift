/// The kind of signature container to produce: an open set.
public struct SignatureFormat: Hashable, Sendable, CustomStringConvertible {
    /// The name used on command lines and in the journal (`cms`, `cades`).
    public let rawValue: String
    /// Creates a format from its name.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The format's name.
    public var description: String { rawValue }

    /// Plain CMS SignedData (RFC 5652) with signing time.
    public static let cms = SignatureFormat("cms")
    /// CAdES-BES: CMS SignedData with the ESS signing-certificate-v2 attribute (ETSI EN 319 122).
    public static let cadesBES = SignatureFormat("cades")
}
