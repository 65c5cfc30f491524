public import CertificateProviders
public import Foundation

/// One remote session kept on disk, as `certsign sessions list` shows it: which provider, which
/// server, which user, until when, in which file. Never a token, a password or a verifier.
public struct RemoteSessionSummary: Sendable, Equatable {
    /// The provider that made it (`fmp-dss`, `cryptopro-dss`).
    public var provider: ProviderID
    /// The server's base URL.
    public var server: String
    /// The user it was made for, when known.
    public var user: String?
    /// When its access token expires, when the server said so (nil: renewed on use).
    public var expiresAt: Date?
    /// Extra context (`environment/project`, the selected certificate), when there is any.
    public var detail: String?
    /// The file that holds it.
    public var file: URL

    /// Creates a summary; see the properties.
    public init(
        provider: ProviderID,
        server: String,
        user: String?,
        expiresAt: Date?,
        detail: String? = nil,
        file: URL
    ) {
        self.provider = provider
        self.server = server
        self.user = user
        self.expiresAt = expiresAt
        self.detail = detail
        self.file = file
    }

    /// Whether the session belongs to `server` (the same URL, ignoring a trailing slash and case of
    /// the scheme and host).
    public func isFor(server other: String) -> Bool {
        RemoteSessionSummary.normalized(server) == RemoteSessionSummary.normalized(other)
    }

    private static func normalized(_ text: String) -> String {
        var trimmed = text
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard var components = URLComponents(string: trimmed) else { return trimmed }
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        return components.string ?? trimmed
    }
}
