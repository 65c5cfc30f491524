import CertificateProviders
public import Foundation

/// Where a ``SignatureJournal`` is: an SQLite file or a PostgreSQL database.
public enum JournalLocation: Sendable, Hashable, CustomStringConvertible {
    /// An SQLite database file.
    case sqlite(URL)
    /// A PostgreSQL database, as a libpq connection string (`postgresql://USER@HOST:PORT/DB?sslmode=…`
    /// or `host=… dbname=…`) that holds no password: libpq reads it from `PGPASSWORD`, `~/.pgpass`
    /// or `PGPASSFILE`.
    case postgreSQL(String)

    /// Parses `sqlite:PATH`, `postgresql://…` or `postgres://…` (the form of `--journal` and
    /// `CERTSIGN_JOURNAL`).
    /// - Throws: `.invalidParameter` for another form, an empty path, or a connection string that
    ///   holds a password (the reason never repeats it).
    public init(parsing text: String) throws {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else {
                throw CertificateProviderError.invalidParameter("the journal 'sqlite:' needs a file path: sqlite:PATH")
            }
            self = .sqlite(URL(fileURLWithPath: path))
        } else if text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") {
            try Self.checkNoPassword(text)
            self = .postgreSQL(text)
        } else {
            throw CertificateProviderError.invalidParameter(
                "the journal must be sqlite:PATH or a PostgreSQL URI (postgresql://USER@HOST:PORT/DATABASE); got "
                    + "'\(Self.redacted(text))'"
            )
        }
    }

    /// A path, or the URI as user@host:port/database (never a password).
    public var description: String {
        switch self {
        case .sqlite(let url): return "sqlite:\(url.path)"
        case .postgreSQL(let connectionString): return Self.redacted(connectionString)
        }
    }

    /// Refuses a `postgresql://` URI with a password (`user:password@` or a `password` query
    /// option), read with Foundation's URL parser. The PostgreSQL journal (`SignatureJournalPostgres`)
    /// checks the string again with libpq's own parser before it connects, so a keyword string
    /// (`host=… password=…`) given as ``postgreSQL(_:)`` is refused there.
    static func checkNoPassword(_ uri: String) throws {
        try URLCredentials.check(
            uri,
            what: "the journal URL",
            instead: "give the password through PGPASSWORD, ~/.pgpass or PGPASSFILE (a .pgpass file of mode 0600)",
            allowingUser: true
        )
        let queryItems = URLComponents(string: uri)?.queryItems ?? []
        if queryItems.contains(where: { $0.name == "password" && !($0.value ?? "").isEmpty }) {
            throw CertificateProviderError.invalidParameter(
                "the journal's connection string holds a password, which would show in the process list and in "
                    + "logs; remove it and give it through PGPASSWORD, ~/.pgpass or PGPASSFILE (a .pgpass file of "
                    + "mode 0600)"
            )
        }
    }

    /// `postgresql://user@host:port/database` from a URI, without a password or any other option;
    /// for a keyword string (`host=… dbname=…`) only that it is one, since its values may include a
    /// password.
    static func redacted(_ connectionString: String) -> String {
        guard connectionString.hasPrefix("postgresql://") || connectionString.hasPrefix("postgres://") else {
            return connectionString.hasPrefix("sqlite:") ? connectionString : "postgresql (keyword connection string)"
        }
        guard let components = URLComponents(string: connectionString) else {
            return "postgresql (unparsable connection string)"
        }
        let user = components.user.map { "\($0)@" } ?? ""
        let host = components.host ?? "localhost"
        let port = components.port.map { ":\($0)" } ?? ""
        let database = components.path.isEmpty ? "" : components.path
        return "postgresql://\(user)\(host)\(port)\(database)"
    }
}
