import CertificateProviders
public import Foundation
import HTTPClient
public import RemoteProviderSupport

extension FMPDSSProvider: RemoteSessionKeeping {
    /// The session kept in `directory` (`fmp-session.json`), without its tokens, or none. The
    /// platform does not say when its tokens expire (they are renewed on use), so there is no expiry.
    /// - Parameter warning: told when the file is ignored (not a private regular file of this user).
    /// - Throws: `.storeCorrupted` for a damaged session file.
    public static func keptSessions(
        in directory: URL,
        warning: (@Sendable (String) -> Void)? = nil
    ) throws -> [RemoteSessionSummary] {
        let store = FMPSessionStore(directory: directory, warning: warning)
        guard let stored = try store.load() else { return [] }
        let session = stored.session
        var detail = "\(session.environment)/\(session.project)"
        if let id = stored.certificateID { detail += ", certificate \(id)" }
        return [
            RemoteSessionSummary(
                provider: .fmpDSS,
                server: session.host.absoluteString,
                user: session.username,
                expiresAt: nil,
                detail: detail,
                file: store.fileURL
            )
        ]
    }

    /// Removes the session file in `directory` (whatever it holds) under the session lock (a command
    /// using the session meanwhile finishes first), and the TLS settings of its login
    /// (``FMPLoginTLS``); no-op when there is none.
    /// - Returns: the removed file's path, or nil when there was none.
    /// - Throws: `.fileSystem` when it cannot be removed.
    public static func removeKeptSession(in directory: URL) async throws -> String? {
        // The TLS settings of the login go with the session they were given for.
        try FMPLoginTLS().save(in: directory)
        let store = FMPSessionStore(directory: directory, warning: nil)
        guard (try? FileManager.default.attributesOfItem(atPath: store.fileURL.path)) != nil else { return nil }
        try await store.withLock { try store.delete() }
        return store.fileURL.path
    }
}
