import CertificateProviders
internal import Durability
import Foundation
import HTTPClient

/// The FMP DSS provider's session file: `fmp-session.json` (mode 0600) in the `storeDirectory`,
/// holding the session (host, API version, environment, project, device, user, token pair), whether
/// plain HTTP was allowed, and the certificate `initialize` selected.
///
/// Concurrency: every use of the session (a call that may renew the single-use refresh token)
/// happens under an exclusive `flock(2)` on `.fmp-session.lock` next to the file, taken without
/// blocking a thread (polled), and a save is a compare-and-swap: it replaces the file only while it
/// still holds the session the caller started from, so a newer session another process saved is
/// never overwritten. A file that is not a regular file of this user, or that others can read, is
/// ignored (the `warning` callback says so): a planted or foreign session is never used.
struct FMPSessionStore: Sendable {
    /// What the file holds.
    struct Stored: Codable, Equatable, Sendable {
        var session: FMPSession
        var allowsInsecureHTTP: Bool
        /// The certificate `initialize` selected, when it ran.
        var certificateID: Int?
        var certificateDER: Data?
    }

    static let fileName = "fmp-session.json"
    let directory: URL
    let warning: (@Sendable (String) -> Void)?

    /// The file, its lock and its checks: the remote providers' one session-file implementation.
    private var file: PrivateFileStore<Stored> {
        PrivateFileStore(
            directory: directory,
            fileName: FMPSessionStore.fileName,
            wording: .init(
                name: "the FMP session",
                ignoredAdvice: "delete it and log in again ('certsign dss login')",
                damagedAdvice: "log in again ('certsign dss login …')"
            ),
            warning: warning
        )
    }

    var fileURL: URL { file.fileURL }

    /// The stored session, or nil when there is none (or the file is not trusted).
    /// - Throws: `.storeCorrupted` when the file is not a session of this provider.
    func load() throws -> Stored? { try file.load() }

    /// Writes `stored` when the file still holds `expected` (nil: whatever it holds, for a new
    /// login). Call under ``withLock(_:)``.
    /// - Returns: whether it was written (false: a newer session is on file and was kept).
    /// - Throws: `.fileSystem`.
    @discardableResult
    func save(_ stored: Stored, replacing expected: FMPSession?) throws -> Bool {
        if let expected, let current = try? load(), current.session != expected { return false }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try file.write(stored, encoder: encoder)
        return true
    }

    /// Removes the file; no-op when absent.
    func delete() throws { try file.delete() }

    /// Runs `body` holding the session lock (other processes and tasks wait; no thread blocks).
    func withLock<R: Sendable>(_ body: () async throws -> R) async throws -> R { try await file.withLock(body) }
}
