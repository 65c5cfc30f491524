public import CertificateProviders
public import Foundation
internal import HTTPClient

/// A remote provider that logs in to its server (a session): `certsign sessions list|clear` ask each
/// built-in provider that conforms what it keeps in the store, instead of a list of names.
public protocol RemoteSessionKeeping: BuiltInProvider {
    /// Whether sessions outlive the process in the store directory (false: each command gets a new
    /// token, and there is nothing to list or clear).
    static var keepsSessionsOnDisk: Bool { get }

    /// The session kept in `directory`, without its secrets, or none.
    /// - Parameter warning: told when a file is ignored (not a private regular file of this user).
    /// - Throws: `.storeCorrupted` for a damaged session file.
    static func keptSessions(in directory: URL, warning: (@Sendable (String) -> Void)?) throws -> [RemoteSessionSummary]

    /// Removes the session file in `directory`; no-op when there is none.
    /// - Returns: the removed file's path, or nil when there was none.
    /// - Throws: `.fileSystem` when it cannot be removed.
    static func removeKeptSession(in directory: URL) async throws -> String?
}

extension RemoteSessionKeeping {
    /// Sessions go to disk unless the provider says otherwise.
    public static var keepsSessionsOnDisk: Bool { true }
}
