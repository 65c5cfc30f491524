import CertificateProviders
import Foundation
import SignatureJournal

/// The PostgreSQL backend of ``SignatureJournal``: many workers on many machines, one journal.
///
/// Appends are serialised by the head row, locked `FOR UPDATE` by each appending transaction from
/// reading the head to its commit: every entry follows exactly one other, in one total order, and
/// a group of a batch is one transaction (one commit). The schema is created on first use and
/// migrated forward inside one transaction holding a transaction-level advisory lock, so workers
/// starting at once on an empty database create it once and none fails; a schema newer than this
/// build's is refused.
final class PostgresJournalBackend: JournalBackend {
    /// The PostgreSQL schema version this build writes: 2 added the queue of pending work.
    static let schemaVersion: Int64 = 2
    /// The advisory-lock key of schema changes ("CSJ1", the SQLite journal's application_id).
    static let schemaLockKey: Int64 = 0x4353_4A31

    let connection: PostgresConnection
    var location: String { connection.location }

    /// Connects and prepares the schema.
    init(connectionString: String) throws {
        try PostgresConnectionString.checkNoPassword(connectionString)
        connection = try PostgresConnection(connectionString: connectionString)
        try prepareSchema()
    }

    /// The migrations, in order: `migrations[n]` takes the schema from version n to n + 1.
    static let migrations: [String] = [
        """
        CREATE TABLE journal_entries (
            seq BIGINT PRIMARY KEY,
            kind TEXT NOT NULL,
            id TEXT NOT NULL,
            created_at DOUBLE PRECISION,
            provider_id TEXT,
            signer_subject TEXT,
            signer_fingerprint TEXT,
            document_name TEXT,
            document_size BIGINT,
            document_digest BYTEA,
            digest_algorithm TEXT,
            format TEXT,
            detached BOOLEAN,
            signature_path TEXT,
            signature BYTEA,
            host TEXT NOT NULL,
            pid BIGINT NOT NULL,
            previous_hash BYTEA NOT NULL,
            hash BYTEA NOT NULL
        );
        CREATE TABLE journal_current (id TEXT PRIMARY KEY, seq BIGINT NOT NULL);
        CREATE TABLE journal_head (singleton INT PRIMARY KEY CHECK (singleton = 1), count BIGINT NOT NULL,
            hash BYTEA NOT NULL);
        INSERT INTO journal_head VALUES (1, 0, decode(repeat('00', 32), 'hex'));
        CREATE INDEX journal_entries_by_time ON journal_entries (created_at);
        CREATE VIEW signatures AS
            SELECT e.id, e.created_at, e.provider_id, e.signer_subject, e.signer_fingerprint, e.document_name,
                e.document_size, e.document_digest, e.digest_algorithm, e.format, e.detached, e.signature_path,
                e.signature, e.host, e.pid, e.seq
            FROM journal_current c JOIN journal_entries e ON e.seq = c.seq;
        """,
        pendingWorkMigration,
    ]

    /// Creates or migrates the schema in one transaction under the advisory lock; refuses a newer one.
    private func prepareSchema() throws {
        try connection.transaction {
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [.integer(Self.schemaLockKey)])
            let exists = try connection.execute("SELECT to_regclass('certsign_journal_schema') IS NOT NULL")
            var version: Int64 = 0
            if exists.bool(0, 0) == true {
                let stored = try connection.execute("SELECT max(version)::int8 FROM certsign_journal_schema")
                version = stored.integer(0, 0) ?? 0
            } else {
                try connection.execute("CREATE TABLE certsign_journal_schema (version INT NOT NULL)")
            }
            guard version <= Self.schemaVersion else {
                throw CertificateProviderError(
                    .storeCorrupted,
                    "the PostgreSQL journal \(location) has schema version \(version), newer than this build's "
                        + "\(Self.schemaVersion); update certsign"
                )
            }
            guard version < Self.schemaVersion else { return }
            for step in Int(version)..<Int(Self.schemaVersion) {
                // Migrations are constants of this build: no value is ever put into them.
                try connection.executeScript(Self.migrations[step])
            }
            try connection.execute("DELETE FROM certsign_journal_schema")
            try connection.execute(
                "INSERT INTO certsign_journal_schema (version) VALUES ($1::int8)",
                [.integer(Self.schemaVersion)]
            )
        }
    }

    func schemaVersion() throws -> Int64 {
        try connection.execute("SELECT max(version)::int8 FROM certsign_journal_schema").integer(0, 0) ?? 0
    }

    /// The body of ``appendEntries(_:)``, in a transaction the caller holds (its own, or a claim's).
    func appendEntriesInClaim(
        _ make: (_ head: JournalHead, _ currentSequence: (String) throws -> Int64?) throws -> [JournalEntry]
    ) throws {
        let locked = try connection.executePrepared(
            "certsign_lock_head",
            "SELECT count, hash FROM journal_head WHERE singleton = 1 FOR UPDATE",
            []
        )
        guard locked.rows == 1 else { throw missingHead() }
        let head = JournalHead(count: locked.integer(0, 0) ?? 0, hash: locked.bytes(0, 1) ?? [])
        let entries = try make(head) { id in
            let found = try connection.executePrepared(
                "certsign_current",
                "SELECT seq FROM journal_current WHERE id = $1",
                [.text(id)]
            )
            return found.rows > 0 ? found.integer(0, 0) : nil
        }
        guard let last = entries.last else { return }
        if entries.allSatisfy({ $0.kind == JournalEntry.Kind.sign.rawValue }) {
            try insertSigned(entries)
        } else {
            for entry in entries { try insert(entry) }
        }
        try connection.executePrepared(
            "certsign_set_head",
            "UPDATE journal_head SET count = $1, hash = $2 WHERE singleton = 1",
            [.integer(last.sequence), .bytes(last.hash)]
        )
    }

    /// Rows per multi-row INSERT of `sign` entries (19 parameters each; a statement takes at most
    /// 65 535): a batch's group is one round trip for its entries and one for the current index.
    static let rowsPerInsert = 128

    /// `$1, $2, …` for `rows` rows of `columns` parameters: `($1, $2), ($3, $4)`.
    static func placeholders(rows: Int, columns: Int) -> String {
        (0..<rows).map { row in
            "(" + (1...columns).map { "$\(row * columns + $0)" }.joined(separator: ", ") + ")"
        }.joined(separator: ", ")
    }

    /// Appends `sign` entries with one multi-row INSERT per ``rowsPerInsert`` into each table.
    private func insertSigned(_ entries: [JournalEntry]) throws {
        var start = 0
        while start < entries.count {
            let chunk = Array(entries[start..<min(start + Self.rowsPerInsert, entries.count)])
            try connection.executePrepared(
                "certsign_insert_entries_\(chunk.count)",
                "INSERT INTO journal_entries (\(JournalSQL.columns())) VALUES "
                    + Self.placeholders(rows: chunk.count, columns: 19),
                chunk.flatMap(Self.values)
            )
            do {
                try connection.executePrepared(
                    "certsign_insert_current_\(chunk.count)",
                    "INSERT INTO journal_current (id, seq) VALUES " + Self.placeholders(rows: chunk.count, columns: 2),
                    chunk.flatMap { [PostgresValue.text($0.recordID), .integer($0.sequence)] }
                )
            } catch let error as CertificateProviderError where error.code == .alreadyExists {
                guard chunk.count > 1 else { throw chunk[0].duplicateError }
                throw CertificateProviderError(
                    .alreadyExists,
                    "the journal already has a signature with one of the ids \(chunk[0].recordID) … "
                        + "\(chunk[chunk.count - 1].recordID); nothing of them was added"
                )
            }
            start += chunk.count
        }
    }

    private func insert(_ entry: JournalEntry) throws {
        try connection.executePrepared(
            "certsign_insert_entry",
            "INSERT INTO journal_entries (\(JournalSQL.columns())) VALUES ("
                + (1...19).map { "$\($0)" }.joined(separator: ", ") + ")",
            Self.values(entry)
        )
        do {
            switch JournalEntry.Kind(rawValue: entry.kind) {
            case .sign:
                try connection.executePrepared(
                    "certsign_insert_current",
                    "INSERT INTO journal_current (id, seq) VALUES ($1, $2)",
                    [.text(entry.recordID), .integer(entry.sequence)]
                )
            case .update:
                try connection.executePrepared(
                    "certsign_update_current",
                    "UPDATE journal_current SET seq = $2 WHERE id = $1",
                    [.text(entry.recordID), .integer(entry.sequence)]
                )
            case .remove, nil:
                try connection.executePrepared(
                    "certsign_remove_current",
                    "DELETE FROM journal_current WHERE id = $1",
                    [.text(entry.recordID)]
                )
            }
        } catch let error as CertificateProviderError where error.code == .alreadyExists {
            throw entry.duplicateError
        }
    }

    private func missingHead() -> CertificateProviderError {
        CertificateProviderError(
            .storeCorrupted,
            "the PostgreSQL journal \(location) has no head row; it was changed behind certsign's back"
        )
    }

    func records() throws -> [SignatureRecord] {
        let result = try connection.execute(
            JournalSQL.currentRecords()
        )
        return try (0..<result.rows).map { try Self.entry(result, $0).record() }
    }

    func record(id: String) throws -> SignatureRecord? {
        let result = try connection.execute(
            JournalSQL.currentRecords("WHERE c.id = $1"),
            [.text(id)]
        )
        return result.rows > 0 ? try Self.entry(result, 0).record() : nil
    }

    func count() throws -> Int {
        Int(try connection.execute("SELECT count(*)::int8 FROM journal_current").integer(0, 0) ?? 0)
    }

    func head() throws -> JournalHead {
        let result = try connection.execute("SELECT count, hash FROM journal_head WHERE singleton = 1")
        guard result.rows == 1 else { throw missingHead() }
        return JournalHead(count: result.integer(0, 0) ?? 0, hash: result.bytes(0, 1) ?? [])
    }

    func entries(after sequence: Int64, limit: Int) throws -> [JournalEntry] {
        let result = try connection.execute(
            "SELECT \(JournalSQL.columns()) FROM journal_entries WHERE seq > $1 ORDER BY seq LIMIT $2",
            [.integer(sequence), .integer(Int64(limit))]
        )
        return (0..<result.rows).map { Self.entry(result, $0) }
    }

    func currentIndex() throws -> [String: Int64] {
        let result = try connection.execute("SELECT id, seq FROM journal_current")
        var index: [String: Int64] = [:]
        for row in 0..<result.rows { index[result.text(row, 0) ?? ""] = result.integer(row, 1) ?? 0 }
        return index
    }

    func readSnapshot<R>(_ body: () throws -> R) throws -> R {
        try connection.transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
    }

    func checkIntegrity() throws { _ = try head() }

    // MARK: Rows

    static func values(_ entry: JournalEntry) -> [PostgresValue] {
        func text(_ value: String?) -> PostgresValue { value.map { .text($0) } ?? .null(PostgresValue.textType) }
        func bytes(_ value: [UInt8]?) -> PostgresValue { value.map { .bytes($0) } ?? .null(PostgresValue.bytesType) }
        func integer(_ value: Int64?) -> PostgresValue {
            value.map { .integer($0) } ?? .null(PostgresValue.integerType)
        }
        return [
            .integer(entry.sequence), .text(entry.kind), .text(entry.recordID),
            entry.createdAt.map { .double($0) } ?? .null(PostgresValue.doubleType), text(entry.providerID),
            text(entry.signerSubject), text(entry.signerFingerprint), text(entry.documentName),
            integer(entry.documentSize), bytes(entry.documentDigest), text(entry.digestAlgorithm),
            text(entry.format), entry.detached.map { .bool($0) } ?? .null(PostgresValue.boolType),
            text(entry.signaturePath), bytes(entry.signature), .text(entry.host), .integer(entry.processID),
            .bytes(entry.previousHash), .bytes(entry.hash),
        ]
    }

    static func entry(_ result: PostgresResult, _ row: Int32) -> JournalEntry {
        JournalEntry(row: PostgresRow(result: result, row: row))
    }
}

/// A row of a binary-format result, read as a ``JournalRow``.
struct PostgresRow: JournalRow {
    let result: PostgresResult
    let row: Int32

    func text(_ column: Int32) -> String? { result.text(row, column) }
    func bytes(_ column: Int32) -> [UInt8]? { result.bytes(row, column) }
    /// `int8`, or a `bool` (one byte 0 or 1).
    func integer(_ column: Int32) -> Int64? { result.integer(row, column) }
    func double(_ column: Int32) -> Double? { result.double(row, column) }
}
