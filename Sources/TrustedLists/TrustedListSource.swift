public import Foundation

/// Where a cached trusted list came from and the validators its server sent with it: kept next to
/// the list (`NAME.source.json`) so that the next refresh asks for it only when it changed
/// (`If-None-Match`, `If-Modified-Since`).
public struct TrustedListSource: Codable, Sendable, Hashable {
    /// The URL the list was downloaded from.
    public var url: String
    /// The territory the list is of (`EU` for the list of the lists).
    public var territory: String
    /// The server's `ETag` for the stored copy, when it sent one.
    public var entityTag: String?
    /// The server's `Last-Modified` for the stored copy, when it sent one (as sent).
    public var lastModified: String?
    /// When the stored copy was downloaded and verified.
    public var fetched: Date

    /// Creates a record.
    public init(url: String, territory: String, entityTag: String?, lastModified: String?, fetched: Date) {
        self.url = url
        self.territory = territory
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.fetched = fetched
    }

    enum CodingKeys: String, CodingKey {
        case url, territory, fetched
        case entityTag = "etag"
        case lastModified = "lastModified"
    }
}
