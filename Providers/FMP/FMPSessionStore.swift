import CertificateProviders
import Foundation

#if canImport(Glibc)
import Glibc
#endif

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

    var fileURL: URL { directory.appendingPathComponent(FMPSessionStore.fileName) }
    private var lockPath: String { directory.appendingPathComponent(".fmp-session.lock").path }

    /// The stored session, or nil when there is none (or the file is not trusted).
    /// - Throws: `.storeCorrupted` when the file is not a session of this provider.
    func load() throws -> Stored? {
        if let reason = FileSystem.untrustedFileReason(fileURL.path) {
            warning?(
                "ignoring the FMP session \(fileURL.path): \(reason); delete it and log in again ('certsign dss login')"
            )
            return nil
        }
        guard let bytes = FileSystem.read(fileURL.path) else { return nil }
        do {
            return try JSONDecoder().decode(Stored.self, from: Data(bytes))
        } catch {
            throw CertificateProviderError(
                .storeCorrupted,
                "the saved FMP session \(fileURL.path) is damaged; log in again ('certsign dss login …')"
            )
        }
    }

    /// Writes `stored` when the file still holds `expected` (nil: whatever it holds, for a new
    /// login). Call under ``withLock(_:)``.
    /// - Returns: whether it was written (false: a newer session is on file and was kept).
    /// - Throws: `.fileSystem`.
    @discardableResult
    func save(_ stored: Stored, replacing expected: FMPSession?) throws -> Bool {
        if let expected, let current = try? load(), current.session != expected { return false }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let bytes: [UInt8]
        do { bytes = Array(try encoder.encode(stored)) } catch {
            throw CertificateProviderError(.fileSystem, "cannot encode the FMP session")
        }
        try FileSystem.makePrivateDirectory(directory.path)
        try FileSystem.writeAtomically(fileURL.path, bytes)
        return true
    }

    /// Removes the file; no-op when absent.
    func delete() throws {
        if unlink(fileURL.path) != 0, errno != ENOENT { throw FileSystem.failure("removing", fileURL.path) }
    }

    /// Runs `body` holding the session lock (other processes and tasks wait; no thread blocks).
    func withLock<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        try FileSystem.makePrivateDirectory(directory.path)
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw FileSystem.failure("opening the lock file", lockPath) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { throw FileSystem.failure("locking", lockPath) }
            try await Task.sleep(for: .milliseconds(10))
        }
        defer { flock(descriptor, LOCK_UN) }
        return try await body()
    }
}
