import CertificateProviders
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The SQLite backend of ``SignatureJournal``: one database file in WAL mode.
///
/// Safe for several processes at once: WAL mode, a busy timeout, and writes in `BEGIN IMMEDIATE`
/// transactions, whose write lock is the chain's lock. Durable against a killed process (WAL with
/// `synchronous=NORMAL` loses nothing a process committed; only a power loss may drop the last
/// commits). The schema is versioned with `PRAGMA user_version` and migrated forward on open;
/// `PRAGMA application_id` marks the file as ours, so a foreign or damaged file is reported as
/// `.storeCorrupted` and never overwritten. The WAL is checkpointed on a thread of the journal's
/// own (``SQLiteCheckpointer``), so no commit waits for a checkpoint.
final class SQLiteJournalBackend: JournalBackend {
    /// The schema version this build writes: 3 added the hash chain, 4 the queue of pending work.
    static let schemaVersion: Int64 = 4
    /// The `application_id` marking a certsign journal ("CSJ1").
    static let applicationID: Int64 = 0x4353_4A31

    let connection: SQLiteConnection
    /// The database file.
    let url: URL
    var location: String { url.path }
    private var preparedStatements: [String: SQLiteStatement] = [:]

    /// Opens (creating, migrating) the journal file at `url`.
    init(url: URL, busyTimeout: Duration, checkpointThreshold: Int32) throws {
        self.url = url
        try Self.createPrivately(url)
        let milliseconds =
            busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        let connection = try SQLiteConnection(path: url.path, busyTimeoutMilliseconds: Int32(clamping: milliseconds))
        try Self.checkHeader(connection, url)
        try Self.prepareSchema(connection, busyTimeout: busyTimeout)
        connection.checkpointInBackground(SQLiteCheckpointer(path: url.path, threshold: checkpointThreshold))
        self.connection = connection
    }

    /// Opens a new, empty journal that lives in this process's memory only (SQLite `:memory:`): no
    /// file, no WAL, no checkpoints; it is gone when the journal is released.
    init(inMemory: Void) throws {
        url = SignatureJournal.inMemoryURL
        let connection = try SQLiteConnection(path: ":memory:", busyTimeoutMilliseconds: 0)
        try Self.prepareSchema(connection, busyTimeout: .zero, inMemory: true)
        self.connection = connection
    }

    /// Runs `body` with a statement prepared once per connection (batch signing appends many
    /// rows), reset afterwards: a statement left stepping would hold its read snapshot open, and
    /// the connection would neither see other processes' commits nor get the write lock.
    func withStatement<R>(_ sql: String, _ body: (SQLiteStatement) throws -> R) throws -> R {
        let statement: SQLiteStatement
        if let prepared = preparedStatements[sql] {
            statement = prepared
        } else {
            statement = try connection.prepare(sql)
            preparedStatements[sql] = statement
        }
        statement.reset()
        defer { statement.reset() }
        return try body(statement)
    }

    func schemaVersion() throws -> Int64 { try connection.integer("PRAGMA user_version") }

    /// The body of ``appendEntries(_:)``, in a write transaction the caller holds (its own, or a claim's).
    func appendEntriesInClaim(
        _ make: (_ head: JournalHead, _ currentSequence: (String) throws -> Int64?) throws -> [JournalEntry]
    ) throws {
        let head = try head()
        let entries = try make(head) { id in try currentSequence(id) }
        guard let last = entries.last else { return }
        for entry in entries {
            try withStatement("INSERT INTO journal_entries (\(Self.entryColumns)) VALUES (\(Self.placeholders))") {
                try $0.bind(Self.values(entry))
                _ = try $0.step()
            }
            try updateCurrent(entry)
        }
        try withStatement("UPDATE journal_head SET count = ?1, hash = ?2 WHERE singleton = 1") {
            try $0.bind([.integer(last.sequence), .blob(last.hash)])
            _ = try $0.step()
        }
    }

    private func currentSequence(_ id: String) throws -> Int64? {
        try withStatement("SELECT seq FROM journal_current WHERE id = ?1") { query in
            try query.bind([.text(id)])
            return try query.step() ? query.int64(0) : nil
        }
    }

    private func updateCurrent(_ entry: JournalEntry) throws {
        let sql: String
        switch JournalEntry.Kind(rawValue: entry.kind) {
        case .sign: sql = "INSERT INTO journal_current (id, seq) VALUES (?1, ?2)"
        case .update: sql = "UPDATE journal_current SET seq = ?2 WHERE id = ?1"
        case .remove, nil: sql = "DELETE FROM journal_current WHERE id = ?1 AND ?2 IS NOT NULL"
        }
        do {
            try withStatement(sql) { statement in
                try statement.bind([.text(entry.recordID), .integer(entry.sequence)])
                _ = try statement.step()
            }
        } catch let error as CertificateProviderError where error.code == .alreadyExists {
            throw entry.duplicateError
        }
    }

    func records() throws -> [SignatureRecord] {
        let query = try connection.prepare(JournalSQL.currentRecords())
        var result: [SignatureRecord] = []
        while try query.step() { result.append(try Self.entry(query).record()) }
        return result
    }

    func record(id: String) throws -> SignatureRecord? {
        let query = try connection.prepare(JournalSQL.currentRecords("WHERE c.id = ?1"))
        try query.bind([.text(id)])
        return try query.step() ? Self.entry(query).record() : nil
    }

    func count() throws -> Int { Int(try connection.integer("SELECT count(*) FROM journal_current")) }

    func head() throws -> JournalHead {
        try withStatement("SELECT count, hash FROM journal_head WHERE singleton = 1") { query in
            guard try query.step() else {
                throw CertificateProviderError(
                    .storeCorrupted,
                    "the signature journal '\(url.path)' has no head row; it was changed behind certsign's back"
                )
            }
            return JournalHead(count: query.int64(0), hash: query.blob(1) ?? [])
        }
    }

    func entries(after sequence: Int64, limit: Int) throws -> [JournalEntry] {
        let query = try connection.prepare(
            "SELECT \(Self.entryColumns) FROM journal_entries WHERE seq > ?1 ORDER BY seq LIMIT ?2"
        )
        try query.bind([.integer(sequence), .integer(Int64(limit))])
        var result: [JournalEntry] = []
        while try query.step() { result.append(Self.entry(query)) }
        return result
    }

    func currentIndex() throws -> [String: Int64] {
        let query = try connection.prepare("SELECT id, seq FROM journal_current")
        var result: [String: Int64] = [:]
        while try query.step() { result[query.text(0) ?? ""] = query.int64(1) }
        return result
    }

    func readSnapshot<R>(_ body: () throws -> R) throws -> R { try connection.readTransaction(body) }

    func checkIntegrity() throws {
        let answer = try connection.text("PRAGMA integrity_check")
        guard answer == "ok" else {
            throw CertificateProviderError(
                .storeCorrupted,
                "the signature journal '\(url.path)' is damaged: \(answer ?? "no answer")"
            )
        }
    }

    // MARK: Rows

    /// The columns of `journal_entries`, in ``JournalEntry``'s order.
    static let entryColumns = JournalSQL.columns()

    static let placeholders = (1...19).map { "?\($0)" }.joined(separator: ", ")

    static func values(_ entry: JournalEntry) -> [SQLiteValue] {
        func text(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
        func blob(_ value: [UInt8]?) -> SQLiteValue { value.map { .blob($0) } ?? .null }
        func integer(_ value: Int64?) -> SQLiteValue { value.map { .integer($0) } ?? .null }
        return [
            .integer(entry.sequence), .text(entry.kind), .text(entry.recordID),
            entry.createdAt.map { .real($0) } ?? .null, text(entry.providerID), text(entry.signerSubject),
            text(entry.signerFingerprint), text(entry.documentName), integer(entry.documentSize),
            blob(entry.documentDigest), text(entry.digestAlgorithm), text(entry.format),
            integer(entry.detached.map { $0 ? 1 : 0 }), text(entry.signaturePath), blob(entry.signature),
            .text(entry.host), .integer(entry.processID), .blob(entry.previousHash), .blob(entry.hash),
        ]
    }

    static func entry(_ row: SQLiteStatement) -> JournalEntry { JournalEntry(row: SQLiteRow(statement: row)) }
}

/// A row of a stepping statement, read as a ``JournalRow``.
struct SQLiteRow: JournalRow {
    let statement: SQLiteStatement

    func text(_ column: Int32) -> String? { statement.text(column) }
    func bytes(_ column: Int32) -> [UInt8]? { statement.blob(column) }
    func integer(_ column: Int32) -> Int64? { statement.isNull(column) ? nil : statement.int64(column) }
    func double(_ column: Int32) -> Double? { statement.isNull(column) ? nil : statement.double(column) }
}
