internal import CSQLite
internal import CSQLiteShims
import CertificateProviders
import Foundation

/// One SQLite connection, closed in `deinit`. Used by one actor at a time.
final class SQLiteConnection {
    private let handle: OpaquePointer
    /// The database path, for error messages.
    let path: String

    /// Opens (creating when missing) the database at `path`.
    /// - Throws: `.fileSystem` when the file cannot be opened or created.
    init(path: String, busyTimeoutMilliseconds: Int32) throws {
        var raw: OpaquePointer?
        // NOFOLLOW: a symbolic link put in place after the journal's own checks is refused too.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        let status = sqlite3_open_v2(path, &raw, flags, nil)
        guard status == SQLITE_OK, let raw else {
            let message = raw.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(raw)
            throw CertificateProviderError(.fileSystem, "cannot open the signature journal '\(path)': \(message)")
        }
        handle = raw
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
    }

    /// Set by ``checkpointInBackground(_:)``; kept alive until the connection is closed, because
    /// the WAL hook points at it.
    private(set) var checkpointer: SQLiteCheckpointer?

    deinit {
        // Closed first: no hook can run once the checkpointer is released after this.
        sqlite3_close_v2(handle)
    }

    /// Calls `body` with the raw handle (for extensions in this module).
    func withHandle<R>(_ body: (OpaquePointer) -> R) -> R { body(handle) }

    /// Hands this connection's checkpoints to `checkpointer`: SQLite's automatic checkpoint (run
    /// inside the COMMIT that crosses its threshold) is replaced by a WAL hook that, after each
    /// commit leaving at least `checkpointer.threshold` frames in the log, asks the checkpointer's
    /// thread for one; from four times the threshold on (the thread is failing or behind), the
    /// hook waits for the thread's checkpoint in progress and checkpoints here, as SQLite's own hook
    /// would (this connection is then the only writer, so the whole log is copied and the next
    /// commit starts it again).
    func checkpointInBackground(_ checkpointer: SQLiteCheckpointer) {
        self.checkpointer = checkpointer
        let context = Unmanaged.passUnretained(checkpointer).toOpaque()
        sqlite3_wal_hook(
            handle,
            { context, database, _, frames in
                guard let context else { return SQLITE_OK }
                let checkpointer = Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue()
                guard frames >= checkpointer.threshold else { return SQLITE_OK }
                if frames >= checkpointer.threshold &* 4 {
                    checkpointer.whileNotCheckpointing {
                        _ = sqlite3_wal_checkpoint_v2(database, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
                    }
                } else {
                    checkpointer.request()
                }
                return SQLITE_OK
            },
            context
        )
    }

    /// Runs SQL that returns no rows (several statements allowed).
    func execute(_ sql: String) throws {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status, "running '\(sql.prefix(60))'") }
    }

    /// Prepares one statement.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error(status, "preparing '\(sql.prefix(60))'") }
        return SQLiteStatement(statement, connection: self)
    }

    /// The single integer a query like `PRAGMA user_version` returns.
    func integer(_ sql: String) throws -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else {
            throw CertificateProviderError(.storeCorrupted, "'\(sql)' returned no row on '\(path)'")
        }
        return statement.int64(0)
    }

    /// The single text a query returns, or nil.
    func text(_ sql: String) throws -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    /// Runs `body` in a write transaction started with `BEGIN IMMEDIATE` (takes the write lock up
    /// front, so concurrent writers wait on busy_timeout instead of failing on upgrade).
    func writeTransaction<R>(_ body: () throws -> R) throws -> R {
        try transaction(begin: "BEGIN IMMEDIATE", body)
    }

    /// Runs `body` in a deferred transaction, so its reads see one consistent snapshot.
    func readTransaction<R>(_ body: () throws -> R) throws -> R {
        try transaction(begin: "BEGIN", body)
    }

    /// Runs `body` between `begin` and `COMMIT`, rolling back when it throws.
    private func transaction<R>(begin: String, _ body: () throws -> R) throws -> R {
        try inTransaction(
            begin: { try execute(begin) },
            commit: { try execute("COMMIT") },
            rollback: { try? execute("ROLLBACK") },
            body
        )
    }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// SQLITE_CONSTRAINT_PRIMARYKEY and SQLITE_CONSTRAINT_UNIQUE (extended codes built by macros
    /// Swift cannot import: SQLITE_CONSTRAINT | (6 << 8) and | (8 << 8)).
    static let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)
    static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)

    /// Maps an SQLite status to this package's error codes.
    func error(_ status: Int32, _ action: String) -> CertificateProviderError {
        let message = String(cString: sqlite3_errmsg(handle))
        switch status & 0xFF {
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            return CertificateProviderError(
                .storeCorrupted,
                "'\(path)' is not a readable signature journal (\(message)); it was left untouched: move it away or "
                    + "choose another journal file"
            )
        case SQLITE_CONSTRAINT where status == Self.constraintPrimaryKey || status == Self.constraintUnique:
            return CertificateProviderError(.alreadyExists, "signature journal '\(path)': \(message)")
        case SQLITE_BUSY, SQLITE_LOCKED:
            return CertificateProviderError(
                .timeout,
                "the signature journal '\(path)' stayed locked by another process while \(action)"
            )
        case SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_FULL, SQLITE_READONLY, SQLITE_PERM:
            return CertificateProviderError(.fileSystem, "signature journal '\(path)': \(message) while \(action)")
        default:
            return CertificateProviderError(.storeCorrupted, "signature journal '\(path)': \(message) while \(action)")
        }
    }
}

/// One prepared statement, finalized in `deinit`.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection

    init(_ handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds values to `?1`, `?2`, … in order.
    func bind(_ values: [SQLiteValue]) throws {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .null: status = sqlite3_bind_null(handle, index)
            case .integer(let number): status = sqlite3_bind_int64(handle, index, number)
            case .real(let number): status = sqlite3_bind_double(handle, index, number)
            case .text(var text):
                // A native string's UTF-8 in place (no copy); SQLite copies it (transient) with its length.
                // An empty string still binds text, not NULL: a non-null pointer with length 0.
                status =
                    text.isEmpty
                    ? CSQLiteShims_bind_text_transient(handle, index, "", 0)
                    : text.withUTF8 { buffer in
                        buffer.withMemoryRebound(to: CChar.self) {
                            CSQLiteShims_bind_text_transient(handle, index, $0.baseAddress, Int32($0.count))
                        }
                    }
            case .blob(let bytes):
                status =
                    bytes.isEmpty
                    ? sqlite3_bind_zeroblob(handle, index, 0)
                    : bytes.withUnsafeBytes {
                        CSQLiteShims_bind_blob_transient(handle, index, $0.baseAddress, Int32($0.count))
                    }
            }
            guard status == SQLITE_OK else { throw connection.error(status, "binding a value") }
        }
    }

    /// Makes the statement ready to run again with new bindings.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Advances; returns true when a row is available, false when done.
    func step() throws -> Bool {
        let status = sqlite3_step(handle)
        if status == SQLITE_ROW { return true }
        if status == SQLITE_DONE { return false }
        throw connection.error(status, "reading or writing the journal")
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func blob(_ column: Int32) -> [UInt8]? {
        guard !isNull(column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

/// A value bound to a statement.
enum SQLiteValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}
