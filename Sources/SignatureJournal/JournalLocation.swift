internal import CPostgres
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

    /// Refuses a connection string with a password (`password=`, `user:password@`, `?password=`),
    /// as libpq itself parses it.
    static func checkNoPassword(_ connectionString: String) throws {
        try URLCredentials.check(
            connectionString,
            what: "the journal URL",
            instead: "give the password through PGPASSWORD, ~/.pgpass or PGPASSFILE (a .pgpass file of mode 0600)",
            allowingUser: true
        )
        let options = try parse(connectionString)
        if let password = options["password"], !password.isEmpty {
            throw CertificateProviderError.invalidParameter(
                "the journal's connection string holds a password, which would show in the process list and in "
                    + "logs; remove it and give it through PGPASSWORD, ~/.pgpass or PGPASSFILE (a .pgpass file of "
                    + "mode 0600)"
            )
        }
    }

    /// The options libpq reads from a connection string (none from the environment).
    /// - Throws: `.invalidParameter` when libpq cannot parse it (the reason never repeats it).
    static func parse(_ connectionString: String) throws -> [String: String] {
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &message) else {
            if let message { PQfreemem(message) }
            throw CertificateProviderError.invalidParameter(
                "the journal's PostgreSQL connection string is malformed; expected "
                    + "postgresql://USER@HOST:PORT/DATABASE?sslmode=…"
            )
        }
        defer { PQconninfoFree(options) }
        var result: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { result[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return result
    }

    /// `postgresql://user@host:port/database` from a connection string, without a password or any
    /// other option; the first characters alone when it cannot be parsed.
    static func redacted(_ connectionString: String) -> String {
        guard let options = try? parse(connectionString) else {
            return connectionString.hasPrefix("sqlite:") ? connectionString : "(unparsable connection string)"
        }
        let user = options["user"].map { "\($0)@" } ?? ""
        let host = options["host"] ?? options["hostaddr"] ?? "localhost"
        let port = options["port"].map { ":\($0)" } ?? ""
        let database = options["dbname"].map { "/\($0)" } ?? ""
        return "postgresql://\(user)\(host)\(port)\(database)"
    }
}
