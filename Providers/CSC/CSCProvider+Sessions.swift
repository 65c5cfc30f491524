package import Foundation
import HTTPClient
package import RemoteProviderSupport

/// A CSC service keeps no session on disk: each command gets a new token, so `certsign sessions`
/// has nothing of it to list or clear (and says so).
extension CSCProvider: RemoteSessionKeeping {
    /// False: the identity and token live in memory only.
    package static var keepsSessionsOnDisk: Bool { false }

    /// None: nothing is kept on disk.
    package static func keptSessions(
        in directory: URL,
        warning: (@Sendable (String) -> Void)?
    ) throws -> [RemoteSessionSummary] { [] }

    /// Nil: there is no session file to remove.
    package static func removeKeptSession(in directory: URL) async throws -> String? { nil }
}
