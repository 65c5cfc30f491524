import CertificateProviders
internal import Durability
import Foundation
import HTTPClient
import RemoteProviderSupport

/// The provider's on-disk cache: one JSON file, mode 0600, in the `storeDirectory` the caller
/// chose, holding the server URL, user, client id, the selected certificate (DER, id) and the
/// access token with its expiry.
///
/// Threat model: the access token is a bearer credential until it expires (the STS's `expires_in`,
/// typically an hour). The file is created with mode 0600 (directory 0700 when we create it) and
/// replaced atomically (written to a unique temporary file, fsynced, renamed), so other local users
/// cannot read it and readers never see a half-written file. Anyone running as the same OS user (or
/// root) can read it, as with `~/.ssh`; a stolen token works only until it expires and only with the
/// PIN for PIN-protected keys. Passwords and PINs are never written: the entry keeps a salted
/// PBKDF2 verifier of the login credentials (`password`, `clientSecret`), so a later call with other
/// credentials logs in afresh instead of using the token. ``delete()`` removes the file.
///
/// Changes happen under an exclusive `flock(2)` on `.cryptopro-dss-session.lock` next to the file
/// (``PrivateFileStore``, shared with the FMP provider), and a renewed token never replaces a
/// newer one another process saved meanwhile. A file that is
/// not a regular file of this user, or that other users can read, is not read (a planted or
/// foreign cache); the `warning` callback says so.
struct CryptoProSessionCache: Sendable {
    /// What the file holds.
    struct Entry: Codable, Sendable {
        var version = 1
        var url: String
        var username: String
        var clientID: String
        var certificateID: Int
        var certificateDER: Data
        var accessToken: String
        var expiresAt: Date
        /// The certificate selection the entry was made for (`id:N`, `name:X`, `default`); absent
        /// in caches of older versions.
        var selection: String?
        /// The verifier of the credentials the token was obtained with; absent in caches of older
        /// versions, which therefore never match credentials (the provider logs in afresh).
        var credentials: SessionCredentialVerifier?
    }

    static let fileName = "cryptopro-dss-session.json"
    let directory: URL
    /// Told when a file is ignored.
    var warning: (@Sendable (String) -> Void)?

    /// The file, its lock and its checks: the remote providers' one session-file implementation.
    private var file: PrivateFileStore<Entry> {
        PrivateFileStore(
            directory: directory,
            fileName: CryptoProSessionCache.fileName,
            wording: .init(
                name: "the CryptoPro DSS cache",
                ignoredAdvice: "delete it (certsign writes its own with mode 0600)",
                damagedAdvice: "delete it"
            ),
            warning: warning
        )
    }

    var fileURL: URL { file.fileURL }

    /// The cached entry, or nil when there is no file (or it is not trusted).
    /// - Throws: `.storeCorrupted` when the file is not ours.
    func load() throws -> Entry? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let entry = try file.load(decoder: decoder) else { return nil }
        guard entry.version == 1 else {
            throw CertificateProviderError(
                .storeCorrupted,
                "the CryptoPro DSS cache \(fileURL.path) has version \(entry.version), not 1; delete it"
            )
        }
        return entry
    }

    /// Writes `entry` atomically with mode 0600, under the cache's lock.
    /// - Parameter replacingOnlyOlder: keep the file when it holds a token for the same server,
    ///   user and client that lasts at least as long (another process renewed it meanwhile).
    /// - Throws: `.fileSystem` naming the path.
    func save(_ entry: Entry, replacingOnlyOlder: Bool = false) async throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        try await file.withLock {
            if replacingOnlyOlder, let current = try? load(), current.url == entry.url,
                current.username == entry.username, current.clientID == entry.clientID,
                current.expiresAt >= entry.expiresAt
            {
                return
            }
            try file.write(entry, encoder: encoder)
        }
    }

    /// The kept session as `certsign sessions list` shows it (no token, no verifier), or nil.
    /// - Throws: as ``load()``.
    func summary() throws -> RemoteSessionSummary? {
        guard let entry = try load() else { return nil }
        return RemoteSessionSummary(
            provider: .cryptoProDSS,
            server: entry.url,
            user: entry.username,
            expiresAt: entry.expiresAt,
            detail: "certificate \(entry.certificateID)",
            file: fileURL
        )
    }

    /// Removes the file; no-op when absent.
    /// - Throws: `.fileSystem` when it exists and cannot be removed.
    func delete() throws { try file.delete() }
}
