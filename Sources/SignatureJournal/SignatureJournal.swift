import CertificateProviders
public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The local record of signatures: one SQLite database file, one row per signature.
///
/// Safe for several processes at once: WAL mode, a busy timeout, and writes in `BEGIN IMMEDIATE`
/// transactions. Durable against a killed process (WAL with `synchronous=NORMAL` loses nothing a
/// process committed; only a power loss may drop the last commits). The schema is versioned with
/// `PRAGMA user_version` and migrated forward on open; `PRAGMA application_id` marks the file as
/// ours, so a foreign or damaged file is reported as `.storeCorrupted` and never overwritten. The
/// WAL is copied back into the database file (checkpointed) on a thread of the journal's own once it
/// holds 4000 pages, so no commit waits for a checkpoint.
///
/// What a record promises (**acknowledged**): a signature is acknowledged once its record is
/// committed here. The coordinator writes a signature file completely (temporary file, `fsync`,
/// rename) and syncs its directory before it commits the record, so every record that survives a
/// crash names a complete `.p7s`. Batch signing (`SigningCoordinator.signEach` in `Signing`)
/// syncs each output directory once and commits once per group of at most
/// `SigningCoordinator.batchGroupSize` records, through one prepared INSERT statement: a killed
/// batch keeps every group committed before the kill, and may leave complete `.p7s` files of the
/// group in progress without a record (never a record without its file, never a torn `.p7s`).
public actor SignatureJournal {
    /// The schema version this build writes.
    public static let schemaVersion: Int64 = 2
    /// The `application_id` marking a certsign journal ("CSJ1").
    public static let applicationID: Int64 = 0x4353_4A31

    /// The database file.
    public nonisolated let url: URL
    private let connection: SQLiteConnection
    private var preparedInsert: SQLiteStatement?

    /// Opens the journal at `url`, creating it (and its schema) when the file does not exist, and
    /// migrating an older schema.
    ///
    /// - Parameters:
    ///   - url: the database file; its directory must exist. A new file is created with mode 0600;
    ///     a symbolic link, a file that is not a regular file, or one another user owns is refused
    ///   (the journal names the documents you signed).
    ///   - busyTimeout: how long to wait for another process's write lock (default 10 s).
    /// - Throws: `.storeCorrupted` when the file is not SQLite, belongs to another application or
    ///   has a newer schema; `.fileSystem` when it cannot be opened; `.timeout` when it stays locked.
    public init(url: URL, busyTimeout: Duration = .seconds(10)) throws {
        try self.init(url: url, busyTimeout: busyTimeout, checkpointThreshold: Self.checkpointThreshold)
    }

    /// The number of frames (pages) in the WAL from which a commit asks for a checkpoint: 4000, about
    /// 16 MB (SQLite's own default is 1000). The checkpoint runs on a thread of its own
    /// (`SQLiteCheckpointer`), so no commit waits for it.
    static let checkpointThreshold: Int32 = 4000

    /// ``init(url:busyTimeout:)`` with another checkpoint threshold (tests).
    init(url: URL, busyTimeout: Duration = .seconds(10), checkpointThreshold: Int32) throws {
        self.url = url
        try Self.createPrivately(url)
        let milliseconds =
            busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        let connection = try SQLiteConnection(path: url.path, busyTimeoutMilliseconds: Int32(clamping: milliseconds))
        try Self.checkHeader(connection, url)
        try Self.prepareSchema(connection, busyTimeout: busyTimeout)
        connection.checkpointInBackground(
            SQLiteCheckpointer(path: url.path, threshold: checkpointThreshold)
        )
        self.connection = connection
    }

    // MARK: Records

    /// Adds a record.
    /// - Throws: `.alreadyExists` for a duplicate ID; `.storeCorrupted`, `.fileSystem`, `.timeout`.
    public func append(_ record: SignatureRecord) throws {
        try append(contentsOf: [record])
    }

    /// Adds several records in one transaction: all or none.
    /// - Throws: `.alreadyExists` for a duplicate ID (nothing is added); `.storeCorrupted`,
    ///   `.fileSystem`, `.timeout`.
    public func append(contentsOf records: [SignatureRecord]) throws {
        guard !records.isEmpty else { return }
        let statement = try insertStatement()
        defer { statement.reset() }
        var current = records[0]
        do {
            try connection.writeTransaction {
                for record in records {
                    current = record
                    statement.reset()
                    let (path, inline) = Self.storageColumns(record.storage)
                    try statement.bind([
                        .text(record.id), .real(record.createdAt.timeIntervalSince1970),
                        .text(record.providerID.rawValue),
                        .text(record.signerSubject), .text(record.signerFingerprint), .text(record.documentName),
                        .integer(record.documentSize), .blob(record.documentDigest),
                        .text(record.digestAlgorithm.rawValue),
                        .text(record.format.rawValue), .integer(record.isDetached ? 1 : 0), path, inline,
                    ])
                    _ = try statement.step()
                }
            }
        } catch let error as CertificateProviderError where error.code == .alreadyExists {
            throw CertificateProviderError(.alreadyExists, "the journal already has a signature with id \(current.id)")
        }
    }

    /// The `signature_path` and `signature_inline` columns of a record's storage: one is NULL.
    private static func storageColumns(_ storage: SignatureRecord.Storage) -> (path: SQLiteValue, inline: SQLiteValue) {
        switch storage {
        case .file(let url): return (.text(url.path), .null)
        case .inline(let bytes): return (.null, .blob(bytes))
        }
    }

    /// The INSERT statement, prepared once per connection (batch signing appends many rows).
    private func insertStatement() throws -> SQLiteStatement {
        if let prepared = preparedInsert { return prepared }
        let statement = try connection.prepare(
            """
            INSERT INTO signatures (id, created_at, provider_id, signer_subject, signer_fingerprint, document_name,
                document_size, document_digest, digest_algorithm, format, detached, signature_path, signature)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
            """
        )
        preparedInsert = statement
        return statement
    }

    /// The checkpoints the journal's own thread has run (tests).
    var backgroundCheckpoints: Int { connection.checkpointer?.completedCheckpoints ?? 0 }

    /// Every record, newest first.
    public func records() throws -> [SignatureRecord] {
        let statement = try connection.prepare(
            "SELECT \(Self.columns) FROM signatures ORDER BY created_at DESC, rowid DESC"
        )
        var result: [SignatureRecord] = []
        while try statement.step() { result.append(try Self.record(statement)) }
        return result
    }

    /// The record with `id`, or nil.
    public func record(id: String) throws -> SignatureRecord? {
        let statement = try connection.prepare("SELECT \(Self.columns) FROM signatures WHERE id = ?1")
        try statement.bind([.text(id)])
        return try statement.step() ? Self.record(statement) : nil
    }

    /// Removes the record with `id` (the signature file, if any, stays where it is).
    /// - Returns: whether a record was removed.
    @discardableResult
    public func remove(id: String) throws -> Bool {
        try connection.writeTransaction {
            let statement = try connection.prepare("DELETE FROM signatures WHERE id = ?1")
            try statement.bind([.text(id)])
            _ = try statement.step()
            return connection.changes > 0
        }
    }

    /// Removes the records with `ids` in one transaction (their signature files stay where they are).
    /// - Returns: how many records were removed.
    @discardableResult
    public func remove(ids: [String]) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try connection.writeTransaction {
            let statement = try connection.prepare("DELETE FROM signatures WHERE id = ?1")
            var removed = 0
            for id in ids {
                statement.reset()
                try statement.bind([.text(id)])
                _ = try statement.step()
                removed += connection.changes
            }
            return removed
        }
    }

    /// Replaces the stored fields of the record with `record.id` (format and signature bytes
    /// change when a signature is upgraded to CAdES-T).
    /// - Throws: `.notStored` when there is no such record; `.storeCorrupted`, `.fileSystem`, `.timeout`.
    public func update(_ record: SignatureRecord) throws {
        let (path, inline) = Self.storageColumns(record.storage)
        let changed = try connection.writeTransaction {
            let statement = try connection.prepare(
                """
                UPDATE signatures SET created_at = ?2, provider_id = ?3, signer_subject = ?4, signer_fingerprint = ?5, document_name = ?6,
                    document_size = ?7, document_digest = ?8, digest_algorithm = ?9, format = ?10, detached = ?11, signature_path = ?12,
                    signature = ?13 WHERE id = ?1
                """
            )
            try statement.bind([
                .text(record.id), .real(record.createdAt.timeIntervalSince1970), .text(record.providerID.rawValue),
                .text(record.signerSubject), .text(record.signerFingerprint), .text(record.documentName),
                .integer(record.documentSize), .blob(record.documentDigest), .text(record.digestAlgorithm.rawValue),
                .text(record.format.rawValue), .integer(record.isDetached ? 1 : 0), path, inline,
            ])
            _ = try statement.step()
            return connection.changes > 0
        }
        guard changed else {
            throw CertificateProviderError(.notStored, "the journal has no signature with id \(record.id)")
        }
    }

    /// The number of records.
    public func count() throws -> Int { Int(try connection.integer("SELECT count(*) FROM signatures")) }

    /// Runs SQLite's integrity check.
    /// - Throws: `.storeCorrupted` with SQLite's findings when the database is damaged.
    public func checkIntegrity() throws {
        let answer = try connection.text("PRAGMA integrity_check")
        guard answer == "ok" else {
            throw CertificateProviderError(
                .storeCorrupted,
                "the signature journal '\(url.path)' is damaged: \(answer ?? "no answer")"
            )
        }
    }

    // MARK: Schema

    private static let columns = """
        id, created_at, provider_id, signer_subject, signer_fingerprint, document_name, document_size, document_digest, \
        digest_algorithm, format, detached, signature_path, signature
        """

    /// The migrations, in order: `migrations[n]` takes the schema from version n to n + 1.
    static let migrations: [String] = [
        // 0 → 1: the signatures table.
        """
        CREATE TABLE signatures (
            id TEXT PRIMARY KEY NOT NULL,
            created_at REAL NOT NULL,
            provider_id TEXT NOT NULL,
            signer_subject TEXT NOT NULL,
            signer_fingerprint TEXT NOT NULL,
            document_name TEXT NOT NULL,
            document_size INTEGER NOT NULL,
            document_digest BLOB NOT NULL,
            digest_algorithm TEXT NOT NULL,
            format TEXT NOT NULL,
            detached INTEGER NOT NULL,
            signature_path TEXT,
            signature BLOB,
            CHECK (signature_path IS NOT NULL OR signature IS NOT NULL)
        );
        """,
        // 1 → 2: listing by time and by provider.
        """
        CREATE INDEX signatures_by_time ON signatures (created_at);
        CREATE INDEX signatures_by_provider ON signatures (provider_id, created_at);
        """,
    ]

    private static func record(_ statement: SQLiteStatement) throws -> SignatureRecord {
        let storage: SignatureRecord.Storage
        if let path = statement.text(11) {
            storage = .file(URL(fileURLWithPath: path))
        } else {
            storage = .inline(statement.blob(12) ?? [])
        }
        let digestName = statement.text(8) ?? ""
        guard let digestAlgorithm = DigestAlgorithm(name: digestName) else {
            throw CertificateProviderError(
                .storeCorrupted,
                "the signature journal has a record (\(statement.text(0) ?? "?")) with the digest '\(digestName)', "
                    + "which this build does not know; update certsign"
            )
        }
        return SignatureRecord(
            id: statement.text(0) ?? "",
            createdAt: Date(timeIntervalSince1970: statement.double(1)),
            providerID: ProviderID(statement.text(2) ?? ""),
            signerSubject: statement.text(3) ?? "",
            signerFingerprint: statement.text(4) ?? "",
            documentName: statement.text(5) ?? "",
            documentSize: statement.int64(6),
            documentDigest: statement.blob(7) ?? [],
            digestAlgorithm: digestAlgorithm,
            format: SignatureFormat(statement.text(9) ?? ""),
            isDetached: statement.int64(10) != 0,
            storage: storage
        )
    }

    /// Creates the file 0600 when it is missing, never following a symbolic link, and refuses a
    /// path that is not a regular file of this user (a planted link or file), before SQLite opens it.
    ///
    /// An existing journal is only looked at (`lstat`), never opened here: closing any descriptor
    /// of a file drops every POSIX lock this process holds on it, the locks of an SQLite connection
    /// already open on it (another `SignatureJournal` of this process) included. Another process
    /// would then find the journal unused, checkpoint it and delete its WAL under that connection,
    /// whose later commits nobody else would ever see (SQLite's "How To Corrupt", 2.2). A new file
    /// is made with `O_EXCL`, so the descriptor closed here is one no connection can have used.
    private static func createPrivately(_ url: URL) throws {
        let path = url.path
        func failure(_ action: String) -> CertificateProviderError {
            CertificateProviderError(
                .fileSystem,
                "cannot \(action) the signature journal '\(path)': \(String(cString: strerror(errno)))"
            )
        }
        var info = stat()
        if lstat(path, &info) != 0 {
            guard errno == ENOENT else { throw failure("inspect") }
            let descriptor = open(path, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if descriptor >= 0 {
                close(descriptor)
                return
            }
            // Another process or task made it meanwhile: check what is there now.
            guard errno == EEXIST else { throw failure("open") }
            guard lstat(path, &info) == 0 else { throw failure("inspect") }
        }
        guard (info.st_mode & S_IFMT) != S_IFLNK else {
            throw CertificateProviderError(
                .fileSystem,
                "the signature journal '\(path)' is a symbolic link; certsign does not follow it: remove the link"
            )
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw CertificateProviderError(
                .fileSystem,
                "the signature journal '\(path)' is not a regular file; move it away"
            )
        }
        guard info.st_uid == geteuid() else {
            throw CertificateProviderError(
                .fileSystem,
                "the signature journal '\(path)' belongs to another user (uid \(info.st_uid)); move it away or "
                    + "choose another store"
            )
        }
        // A journal an older build created 0644: SQLite gives its -wal and -shm files the same mode.
        if (info.st_mode & 0o077) != 0 { _ = chmod(path, 0o600) }
    }

    /// Refuses a non-empty file that is not an SQLite database, before anything is written to it:
    /// SQLite reads the header on the first statement and refuses (`SQLITE_NOTADB`) without
    /// writing. Read through the connection, not a descriptor of ours (see ``createPrivately(_:)``).
    private static func checkHeader(_ connection: SQLiteConnection, _ url: URL) throws {
        do {
            _ = try connection.integer("PRAGMA schema_version")
        } catch let error as CertificateProviderError where error.code == .storeCorrupted {
            throw CertificateProviderError(
                .storeCorrupted,
                "'\(url.path)' is not a signature journal (not an SQLite database); it was left untouched: move it "
                    + "away or choose another journal file"
            )
        }
    }

    private static func prepareSchema(_ connection: SQLiteConnection, busyTimeout: Duration) throws {
        // One snapshot: read apart, another process creating the journal meanwhile made a new file
        // look like another application's database (no application_id yet, but tables).
        let (applicationID, version) = try connection.readTransaction {
            let applicationID = try connection.integer("PRAGMA application_id")
            let version = try connection.integer("PRAGMA user_version")
            try checkOwnership(connection, applicationID: applicationID, version: version)
            return (applicationID, version)
        }
        // Switching a new file to WAL needs an exclusive lock that SQLite does not wait for (the busy
        // handler is not called): retry while other processes creating the journal hold the file.
        let deadline = ContinuousClock.now + busyTimeout
        var mode: String?
        while true {
            do {
                mode = try connection.text("PRAGMA journal_mode = WAL")
                break
            } catch let error as CertificateProviderError where error.code == .timeout && ContinuousClock.now < deadline
            {
                usleep(2_000)
            }
        }
        if mode?.lowercased() != "wal" {
            throw CertificateProviderError(
                .fileSystem,
                "the signature journal '\(connection.path)' cannot use WAL mode (is it on a network file system?)"
            )
        }
        try connection.execute("PRAGMA synchronous = NORMAL")
        guard applicationID != Self.applicationID || version != Self.schemaVersion else { return }
        try connection.writeTransaction {
            // Re-read under the write lock: another process may have created or migrated it meanwhile.
            let applicationID = try connection.integer("PRAGMA application_id")
            let version = try connection.integer("PRAGMA user_version")
            try checkOwnership(connection, applicationID: applicationID, version: version)
            try migrate(connection, from: version)
            if applicationID == 0 { try connection.execute("PRAGMA application_id = \(Self.applicationID)") }
        }
    }

    private static func checkOwnership(_ connection: SQLiteConnection, applicationID: Int64, version: Int64) throws {
        if applicationID == 0 {
            let tables = try connection.integer("SELECT count(*) FROM sqlite_master")
            guard tables == 0 && version == 0 else {
                throw CertificateProviderError(
                    .storeCorrupted,
                    "'\(connection.path)' is an SQLite database of another application; it was left untouched: "
                        + "choose another journal file"
                )
            }
        } else if applicationID != Self.applicationID {
            throw CertificateProviderError(
                .storeCorrupted,
                "'\(connection.path)' belongs to another application (application_id \(applicationID)); it was left "
                    + "untouched"
            )
        }
        if version > Self.schemaVersion {
            throw CertificateProviderError(
                .storeCorrupted,
                "the signature journal '\(connection.path)' has schema version \(version), newer than this build's "
                    + "\(Self.schemaVersion); update certsign"
            )
        }
    }

    /// Applies the migrations after `version`, then records the new version. Runs inside the
    /// caller's write transaction, so a failed migration leaves the old schema intact.
    static func migrate(_ connection: SQLiteConnection, from version: Int64) throws {
        guard version < Self.schemaVersion else { return }
        for step in Int(version)..<Int(Self.schemaVersion) {
            try connection.execute(migrations[step])
        }
        try connection.execute("PRAGMA user_version = \(Self.schemaVersion)")
    }
}
