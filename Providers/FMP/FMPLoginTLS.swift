import CertificateProviders
internal import Durability
public import Foundation

/// The TLS settings a kept FMP session was logged in with (`fmp-tls.json` beside the session's
/// `fmp-session.json`, 0600): how to reach a server behind a private CA or demanding a client
/// certificate. The session's own file has the tokens; this keeps only what the provider must be given
/// again on every call, and never the client identity's password, only where it comes from (an
/// environment variable or a file, read again each time). Removed with the session
/// (``FMPDSSProvider/removeKeptSession(in:)``).
public struct FMPLoginTLS: Codable, Equatable, Sendable {
    /// The PEM file of the CA that issued the server's certificate.
    public var trustedCAFile: String?
    /// The alias of the client identity in the identity store.
    public var clientIdentity: String?
    /// The environment variable that holds the client identity's password.
    public var clientIdentityPasswordEnv: String?
    /// The file that holds the client identity's password.
    public var clientIdentityPasswordFile: String?

    /// Whether there is nothing to keep (no CA file, no client identity).
    public var isEmpty: Bool { trustedCAFile == nil && clientIdentity == nil }

    /// Creates TLS settings.
    public init(
        trustedCAFile: String? = nil,
        clientIdentity: String? = nil,
        clientIdentityPasswordEnv: String? = nil,
        clientIdentityPasswordFile: String? = nil
    ) {
        self.trustedCAFile = trustedCAFile
        self.clientIdentity = clientIdentity
        self.clientIdentityPasswordEnv = clientIdentityPasswordEnv
        self.clientIdentityPasswordFile = clientIdentityPasswordFile
    }

    /// Where they are kept in a store `directory`.
    public static func fileURL(in directory: URL) -> URL { directory.appendingPathComponent("fmp-tls.json") }

    /// Keeps these settings in `directory` (atomically, 0600, the directory made private); empty
    /// settings remove the file.
    /// - Throws: `.fileSystem` when the file cannot be written.
    public func save(in directory: URL) throws {
        let url = Self.fileURL(in: directory)
        if isEmpty {
            try? FileManager.default.removeItem(at: url)
            return
        }
        try FileSystem.makePrivateDirectory(directory.path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try FileSystem.writeAtomically(url.path, Array(try encoder.encode(self)))
    }

    /// The settings kept in `directory`; empty ones when none are kept.
    /// - Throws: `.storeCorrupted` when the file is damaged (the message names it).
    public static func load(from directory: URL) throws -> FMPLoginTLS {
        let url = fileURL(in: directory)
        guard let data = FileManager.default.contents(atPath: url.path) else { return FMPLoginTLS() }
        do {
            return try JSONDecoder().decode(FMPLoginTLS.self, from: data)
        } catch {
            throw CertificateProviderError(
                .storeCorrupted,
                "the saved DSS TLS settings \(url.path) are damaged; log in again (certsign dss login …)"
            )
        }
    }
}
