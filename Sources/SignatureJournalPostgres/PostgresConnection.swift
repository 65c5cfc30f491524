internal import CPostgres
import CertificateProviders
import Foundation
import SignatureJournal

/// One libpq connection, finished in `deinit`. Used by one actor at a time.
///
/// Statements are always parameterised (`PQexecParams` / `PQexecPrepared`, values sent apart from
/// the SQL, in binary), and results are read in binary. Error text from libpq is scrubbed before
/// it goes into an error (``PostgresConnection/scrub(_:)``).
final class PostgresConnection {
    private let handle: OpaquePointer
    /// user@host:port/database, for messages.
    let location: String
    private var prepared = Set<String>()

    /// Connects with `connectionString` (which must hold no password; libpq takes it from
    /// `PGPASSWORD`, `~/.pgpass` or `PGPASSFILE`). Waits at most 10 s for the server unless the
    /// string sets `connect_timeout`.
    init(connectionString: String) throws {
        location = PostgresConnectionString.redacted(connectionString)
        // Earlier keywords are overridden by later ones: the string's own connect_timeout wins.
        let keywords = ["connect_timeout", "application_name", "dbname"]
        let values = ["10", "certsign", connectionString]
        let raw = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in PQconnectdbParams(keywordPointers, valuePointers, 1) }
        }
        guard let raw else { throw CertificateProviderError(.network, "out of memory connecting to \(location)") }
        guard PQstatus(raw) == CONNECTION_OK else {
            let message = Self.scrub(String(cString: PQerrorMessage(raw)))
            PQfinish(raw)
            throw Self.connectionError(message, location: location)
        }
        handle = raw
    }

    deinit { PQfinish(handle) }

    /// The error for a failed connection: wrong credentials, a missing database or role, an
    /// unreachable server.
    static func connectionError(_ message: String, location: String) -> CertificateProviderError {
        let text = message.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.contains("password authentication failed") || text.contains("no password supplied")
            || text.contains("authentication failed")
        {
            return CertificateProviderError(
                .authenticationFailed,
                "the PostgreSQL journal \(location) refused the role or its password (\(text)); give the password "
                    + "through PGPASSWORD, ~/.pgpass or PGPASSFILE"
            )
        }
        if text.contains("does not exist") {
            return CertificateProviderError.invalidParameter(
                "the PostgreSQL journal \(location) cannot be opened: \(text); create the database (createdb) or fix "
                    + "the URI"
            )
        }
        return CertificateProviderError(
            .network,
            "cannot reach the PostgreSQL journal \(location): \(text)"
        )
    }

    /// libpq or server text with anything that could carry a secret cut out: `password=…`,
    /// `user:password@` and the value of `PGPASSWORD`.
    static func scrub(_ message: String) -> String {
        var text = message
        if let password = ProcessInfo.processInfo.environment["PGPASSWORD"], !password.isEmpty {
            text = text.replacingOccurrences(of: password, with: "***")
        }
        for pattern in [#"password\s*=\s*\S+"#, #"://[^/@\s:]*:[^/@\s]*@"#] {
            text = text.replacingOccurrences(of: pattern, with: "***", options: .regularExpression)
        }
        // One line: libpq ends lines and indents its hints with tabs.
        return text.replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
            .trimmingCharacters(in: .whitespaces)
    }

    // MARK: Statements

    /// Runs `sql` with `parameters` ($1, $2, …) and returns its result.
    @discardableResult
    func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        try withParameters(parameters) { count, types, values, lengths, formats in
            try check(PQexecParams(handle, sql, count, types, values, lengths, formats, 1), sql)
        }
    }

    /// Runs constant SQL of this build (several statements, no parameters: the schema migrations).
    func executeScript(_ sql: String) throws {
        _ = try check(PQexec(handle, sql), sql)
    }

    /// Runs the statement `sql`, prepared once per connection under `name`.
    @discardableResult
    func executePrepared(_ name: String, _ sql: String, _ parameters: [PostgresValue]) throws -> PostgresResult {
        if !prepared.contains(name) {
            let types = parameters.map(\.type)
            _ = try check(PQprepare(handle, name, sql, Int32(types.count), types), sql)
            prepared.insert(name)
        }
        return try withParameters(parameters) { count, _, values, lengths, formats in
            try check(PQexecPrepared(handle, name, count, values, lengths, formats, 1), sql)
        }
    }

    /// Runs `body` between `BEGIN` and `COMMIT`, rolling back when it throws.
    func transaction<R>(begin: String = "BEGIN", _ body: () throws -> R) throws -> R {
        try inTransaction(
            begin: { try execute(begin) },
            commit: { try execute("COMMIT") },
            rollback: { _ = try? execute("ROLLBACK") },
            body
        )
    }

    private func withParameters<R>(
        _ parameters: [PostgresValue],
        _ body: (
            Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
            UnsafePointer<Int32>?
        ) throws -> R
    ) throws -> R {
        let encoded = parameters.map(\.binary)
        let types = parameters.map(\.type)
        let lengths = encoded.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        // The bytes stay alive (and in place) for the call: one buffer, pointers into it.
        var storage = [UInt8]()
        var offsets: [Int?] = []
        for value in encoded {
            if let value {
                offsets.append(storage.count)
                storage += value
            } else {
                offsets.append(nil)
            }
        }
        storage.append(0)
        return try storage.withUnsafeBytes { buffer in
            let base = buffer.baseAddress?.assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset.flatMap { offset in base.map { UnsafePointer($0 + offset) } }
            }
            return try body(Int32(parameters.count), types, pointers, lengths, formats)
        }
    }

    /// Throws for a failed result; returns a successful one.
    private func check(_ result: OpaquePointer?, _ sql: String) throws -> PostgresResult {
        guard let result else {
            throw CertificateProviderError(
                .network,
                "the PostgreSQL journal \(location): \(Self.scrub(String(cString: PQerrorMessage(handle))))"
            )
        }
        let owned = PostgresResult(takingOwnershipOf: result)
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw owned.error(location: location, connectionMessage: String(cString: PQerrorMessage(handle)))
        }
        return owned
    }
}

/// Calls `body` with C strings for `strings` and a NULL after them (libpq's keyword arrays).
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let duplicates = strings.map { strdup($0) }
    defer { for duplicate in duplicates { free(duplicate) } }
    let pointers: [UnsafePointer<CChar>?] = duplicates.map { $0.map { UnsafePointer($0) } } + [nil]
    // Never empty (the NULL at the end), so the buffer has a base address.
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
