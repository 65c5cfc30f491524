public import CertificateProviders
public import Foundation
import HTTPClient
public import RemoteProviderSupport
import Synchronization

extension CryptoProDSSProvider {
    /// Lists the user's certificates again through the current session and selects anew what the
    /// session was made for (`certificateID`, `certificate` or the default), for when a server answer
    /// shows the kept list is stale: a signature made by another certificate (the server re-issued
    /// it), or an unknown certificate id. The new selection replaces the session's, in memory and in
    /// the cache file; callers that hold the old identity ask for it again (`storedCertificate()`).
    /// - Returns: the certificate selected before and now.
    /// - Throws: `.invalidParameter` when the selected certificate is no longer among the user's
    ///   (the reason lists them); as ``CryptoProDSSClient/certificates()``; `.fileSystem`.
    public func refreshSelectedCertificate() async throws -> CertificateRefresh {
        let session = try await currentSession()
        let certificates = try await session.client.certificates()
        let (id, name) = CryptoProDSSProvider.selectionArguments(session.key.selection)
        let chosen = try CryptoProDSSProvider.select(from: certificates, id: id, name: name)
        let refresh = CertificateRefresh(
            previous: session.identity.certificate,
            current: chosen.certificate,
            certificateID: String(chosen.id)
        )
        guard refresh.changed || chosen.id != session.certificateID else { return refresh }
        var renewed = session
        renewed.certificateID = chosen.id
        renewed.identity = SigningIdentity(
            certificate: chosen.certificate,
            chain: [],
            key: ServerHeldSigningKey.cryptoProDSS(certificate: chosen.certificate, certificateID: chosen.id)
        )
        remote.withLock { value in
            if value.kept?.key == session.key { value.kept = renewed }
        }
        if let cache = try cache(parameters), let token = await session.client.currentToken {
            try await cache.save(
                .init(
                    url: session.key.url,
                    username: session.username,
                    clientID: session.key.clientID,
                    certificateID: chosen.id,
                    certificateDER: Data(chosen.certificate.derRepresentation),
                    accessToken: CryptoProDSSProvider.text(of: token.accessToken),
                    expiresAt: token.expiresAt,
                    selection: session.key.selection,
                    credentials: session.verifier
                )
            )
        }
        return refresh
    }

    /// The `id` and `name` arguments of ``select(from:id:name:)`` for a recorded selection.
    static func selectionArguments(_ selection: String) -> (id: Int?, name: String?) {
        if selection.hasPrefix("id:"), let id = Int(selection.dropFirst(3)) { return (id, nil) }
        if selection.hasPrefix("name:") { return (nil, String(selection.dropFirst(5))) }
        return (nil, nil)
    }

    /// The session kept in `directory` (`cryptopro-dss-session.json`), without its token, or none.
    /// - Parameter warning: told when the file is ignored (not a private regular file of this user).
    /// - Throws: `.storeCorrupted` for a file that is not a cache of this provider.
    public static func keptSessions(
        in directory: URL,
        warning: (@Sendable (String) -> Void)? = nil
    ) throws -> [RemoteSessionSummary] {
        try CryptoProSessionCache(directory: directory, warning: warning).summary().map { [$0] } ?? []
    }

    /// Removes the session file in `directory` (whatever it holds); no-op when there is none.
    /// - Returns: the removed file's path, or nil when there was none.
    /// - Throws: `.fileSystem` when it cannot be removed.
    public static func removeKeptSession(in directory: URL) throws -> String? {
        let cache = CryptoProSessionCache(directory: directory, warning: nil)
        guard (try? FileManager.default.attributesOfItem(atPath: cache.fileURL.path)) != nil else { return nil }
        try cache.delete()
        return cache.fileURL.path
    }
}

/// `certsign sessions` lists and clears the session cache (``keptSessions(in:warning:)``).
extension CryptoProDSSProvider: RemoteSessionKeeping {}
