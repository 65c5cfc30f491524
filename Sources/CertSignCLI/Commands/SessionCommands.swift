import BuiltInProviders
import CertificateProviders
import Foundation
import HTTPClient
import RemoteProviderSupport

/// `certsign sessions list|clear`: the remote sessions kept in the store (FMP DSS `dss login`,
/// CryptoPro DSS `sign --provider cryptopro-dss`), shown without tokens and forgotten on request.
extension Commands {
    static let sessionCommands: [CommandDescriptor] = [sessionsList, sessionsClear]

    /// The built-in providers that log in to a server, in the order their sessions are listed: each
    /// says itself whether and where it keeps a session.
    static var sessionProviders: [any RemoteSessionKeeping.Type] {
        BuiltInProviders.all.compactMap { $0 as? any RemoteSessionKeeping.Type }
    }

    /// The built-in provider `id` names, when it logs in to a server.
    static func sessionProvider(_ id: ProviderID) -> (any RemoteSessionKeeping.Type)? {
        sessionProviders.first { $0.id == id }
    }

    /// The providers whose server history is worth asking for: those with a session kept in the
    /// store (a provider nobody logged in to has no history to show, and asking it costs a round trip
    /// or a warning). A session file that cannot be read counts as none ('sessions list' reports it).
    static func providersWithSession(_ context: CommandContext) -> Set<ProviderID> {
        var providers: Set<ProviderID> = []
        for keeper in sessionProviders {
            let id = keeper.id
            let sessions: [RemoteSessionSummary]
            do { sessions = try keptSessions(of: id, context) } catch { continue }
            if !sessions.isEmpty { providers.insert(id) }
        }
        return providers
    }

    static let sessionsList = CommandDescriptor(
        words: ["sessions", "list"],
        storeUse: .reads,
        summary: "list the remote sessions kept in the store (provider, server, user, expiry)",
        discussion: """
            Shows the FMP DSS session of 'certsign dss login' and the CryptoPro DSS session of
            'certsign sign --provider cryptopro-dss' (each kept 0600 in the store); never a token or a
            password. A CSC service keeps no session: each command gets a new token. A kept session serves
            only the server, user and credentials it was made with; other ones log in afresh.
            """,
        examples: ["certsign sessions list", "certsign --json sessions list"]
    ) { context in
        let sessions = try keptSessions(context)
        let rows = sessions.map { session in
            [
                session.provider.rawValue, session.server, session.user ?? "-",
                session.expiresAt.map(Format.localDate) ?? "renewed on use", session.detail ?? "",
            ]
        }
        context.emit(
            encoding: SessionsDocument(sessions: sessions.map(SessionsDocument.Session.init)),
            human: sessions.isEmpty
                ? "no sessions kept in \(context.storeDirectory.path)"
                : Format.table(["PROVIDER", "SERVER", "USER", "EXPIRES", "DETAIL"], rows)
        )
        return CertSign.exitSuccess
    }

    /// `certsign sessions clear [PROVIDER] [--server URL]`.
    struct SessionsClearOptions: CommandOptions {
        var provider: ProviderID?
        var server: String?

        static var arguments: [ArgumentBinding<Self>] {
            let names = Commands.sessionProviders.map { $0.id.rawValue }
            return [
                ArgumentBinding(
                    declaration: ArgumentDeclaration(
                        name: "PROVIDER",
                        help: "only this provider's session (\(Help.alternatives(names))); default all",
                        isOptional: true,
                        valueType: .choice(names)
                    )
                ) { options, text in
                    guard names.contains(text) else {
                        throw InvalidValue(message: "no sessions of provider '\(text)' (\(Help.alternatives(names)))")
                    }
                    options.provider = ProviderID(text)
                }
            ]
        }

        static var options: [OptionBinding<Self>] {
            [
                .value(\.server, "--server", "URL", "only sessions with this server (its base URL)", type: .url) {
                    try ValueConversions.nonEmpty("--server")($0)
                }
            ]
        }
    }

    static let sessionsClear = CommandDescriptor(
        words: ["sessions", "clear"],
        storeUse: .reads,
        summary: "forget the remote sessions kept in the store (all, one provider's, one server's)",
        discussion: """
            Removes the session files (the FMP session with the TLS settings of its login); the next command
            logs in afresh with the credentials it is given. Clearing what is not there is no error.
            """,
        examples: [
            "certsign sessions clear",
            "certsign sessions clear cryptopro-dss",
            "certsign sessions clear fmp-dss --server https://fmp.example.ru",
        ]
    ) { (options: SessionsClearOptions, context) in
        var cleared: [RemoteSessionSummary] = []
        var lines: [String] = []
        let chosen = options.provider.map { id in sessionProviders.filter { $0.id == id } } ?? sessionProviders
        for keeper in chosen where keeper.keepsSessionsOnDisk {
            let provider = keeper.id
            let summary: RemoteSessionSummary?
            do {
                summary = try keptSessions(of: provider, context).first
            } catch let error as CertificateProviderError where error.code == .storeCorrupted {
                // A damaged file names no server: removed only when no --server narrows the command.
                guard options.server == nil else {
                    lines.append("kept the damaged \(provider.rawValue) session file (--server cannot match it)")
                    continue
                }
                summary = nil
            }
            if let server = options.server, summary?.isFor(server: server) != true { continue }
            guard let file = try await removeKeptSession(of: provider, context) else { continue }
            if let summary {
                cleared.append(summary)
                lines.append(
                    "cleared the \(provider.rawValue) session of \(summary.user ?? "?") at \(summary.server)"
                )
            } else {
                lines.append("removed the unusable \(provider.rawValue) session file \(file)")
            }
        }
        if lines.isEmpty {
            lines.append(
                "no \(options.provider.map { "\($0.rawValue) " } ?? "")session"
                    + "\(options.server.map { " with \($0)" } ?? "") is kept in \(context.storeDirectory.path)"
            )
        }
        if let id = options.provider, sessionProvider(id)?.keepsSessionsOnDisk == false {
            lines = ["\(id.rawValue) keeps no session on disk: each command gets a new token"]
        }
        context.emit(
            encoding: SessionsClearedDocument(cleared: cleared.map(SessionsDocument.Session.init)),
            human: lines.joined(separator: "\n")
        )
        return CertSign.exitSuccess
    }

    /// The session `provider` keeps in the invocation's store, or none; a file that is not a private
    /// regular file of this user is left out with a warning.
    /// - Throws: `.storeCorrupted` for a damaged session file (its message names it).
    static func keptSessions(of provider: ProviderID, _ context: CommandContext) throws -> [RemoteSessionSummary] {
        try sessionProvider(provider)?.keptSessions(in: context.storeDirectory, warning: context.warningPrinter) ?? []
    }

    /// Removes the session file of `provider` (and what the provider keeps with it).
    /// - Returns: the removed file's path, or nil when there was none.
    static func removeKeptSession(of provider: ProviderID, _ context: CommandContext) async throws -> String? {
        try await sessionProvider(provider)?.removeKeptSession(in: context.storeDirectory)
    }

    /// Every session kept in the invocation's store, FMP first.
    /// - Throws: `.storeCorrupted` for a damaged session file (its message names it).
    static func keptSessions(_ context: CommandContext) throws -> [RemoteSessionSummary] {
        try sessionProviders.flatMap { try keptSessions(of: $0.id, context) }
    }
}

/// `sessions list`: `{"sessions": [{"provider", "server", "user", "expires", "detail", "file"}]}`.
struct SessionsDocument: Encodable {
    struct Session: Encodable {
        var provider: String
        var server: String
        var user: String?
        var expires: String?
        var detail: String?
        var file: String
        enum CodingKeys: String, CodingKey, CaseIterable { case provider, server, user, expires, detail, file }

        init(_ summary: RemoteSessionSummary) {
            provider = summary.provider.rawValue
            server = summary.server
            user = summary.user
            expires = summary.expiresAt.map(Format.isoDate)
            detail = summary.detail
            file = summary.file.path
        }
    }
    var sessions: [Session]
    enum CodingKeys: String, CodingKey, CaseIterable { case sessions }
}

/// `sessions clear`: `{"cleared": [SESSION]}` with SESSION as in ``SessionsDocument``.
struct SessionsClearedDocument: Encodable {
    var cleared: [SessionsDocument.Session]
    enum CodingKeys: String, CodingKey, CaseIterable { case cleared }
}
