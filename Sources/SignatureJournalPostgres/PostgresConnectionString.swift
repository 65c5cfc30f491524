internal import CPostgres
import CertificateProviders
import Foundation
import SignatureJournal

/// A libpq connection string read by libpq itself (`PQconninfoParse`): URIs and keyword strings
/// alike, with every option the server would see.
enum PostgresConnectionString {
    /// Refuses a connection string with a password (`password=`, `user:password@`, `?password=`),
    /// as libpq itself parses it.
    /// - Throws: `.invalidParameter` naming where the password goes instead (never repeating it).
    static func checkNoPassword(_ connectionString: String) throws {
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
    /// other option.
    static func redacted(_ connectionString: String) -> String {
        guard let options = try? parse(connectionString) else { return "(unparsable connection string)" }
        let user = options["user"].map { "\($0)@" } ?? ""
        let host = options["host"] ?? options["hostaddr"] ?? "localhost"
        let port = options["port"].map { ":\($0)" } ?? ""
        let database = options["dbname"].map { "/\($0)" } ?? ""
        return "postgresql://\(user)\(host)\(port)\(database)"
    }
}
