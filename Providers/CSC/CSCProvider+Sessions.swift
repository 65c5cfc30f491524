public import Foundation
import HTTPClient
public import RemoteProviderSupport

/// A CSC service keeps no session on disk: each command gets a new token, so `certsign sessions`
/// has nothing of it to list or clear (and says so).
extension CSCProvider: RemoteSessionKeeping {
    /// False: the identity and token live in memory only.
    public static var keepsSessionsOnDisk: Bool { false }

    /// None: nothing is kept on disk.
    public static func keptSessions(
        in directory: URL,
        warning: (@Sendable (String) -> Void)?
    ) throws -> [RemoteSessionSummary] { [] }

    /// Nil: there is no session file to remove.
    public static func removeKeptSession(in directory: URL) async throws -> String? { nil }
}
