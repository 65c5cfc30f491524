import CertificateProviders
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Opening an SQLite journal: refusing foreign files, creating the schema, migrating older ones.
extension SQLiteJournalBackend {
    /// The migrations, in order: `sqlMigrations[n]` takes the schema from version n to n + 1; the step 2 → 3
    /// (the hash chain) is ``migrateToChain(_:)``, the step 3 → 4 ``pendingWorkMigration``.
    static let sqlMigrations: [String] = [
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

    /// Creates the file 0600 when it is missing, never following a symbolic link, and refuses a
    /// path that is not a regular file of this user (a planted link or file), before SQLite opens it.
    ///
    /// An existing journal is only looked at (`lstat`), never opened here: closing any descriptor
    /// of a file drops every POSIX lock this process holds on it, the locks of an SQLite connection
    /// already open on it (another `SignatureJournal` of this process) included. Another process
    /// would then find the journal unused, checkpoint it and delete its WAL under that connection,
    /// whose later commits nobody else would ever see (SQLite's "How To Corrupt", 2.2). A new file
    /// is made with `O_EXCL`, so the descriptor closed here is one no connection can have used.
    static func createPrivately(_ url: URL) throws {
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
    static func checkHeader(_ connection: SQLiteConnection, _ url: URL) throws {
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

    /// Switches the file to WAL mode with `synchronous=NORMAL` (durable against a killed process).
    /// - Throws: `.fileSystem` when the file system cannot hold a WAL.
    private static func useWAL(_ connection: SQLiteConnection, busyTimeout: Duration) throws {
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
    }

    static func prepareSchema(_ connection: SQLiteConnection, busyTimeout: Duration, inMemory: Bool = false) throws {
        // One snapshot: read apart, another process creating the journal meanwhile made a new file
        // look like another application's database (no application_id yet, but tables).
        let (applicationID, version) = try connection.readTransaction {
            let applicationID = try connection.integer("PRAGMA application_id")
            let version = try connection.integer("PRAGMA user_version")
            try checkOwnership(connection, applicationID: applicationID, version: version)
            return (applicationID, version)
        }
        if !inMemory { try useWAL(connection, busyTimeout: busyTimeout) }
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
            switch step {
            case 2: try migrateToChain(connection)
            case 3: try connection.execute(pendingWorkMigration)
            default: try connection.execute(sqlMigrations[step])
            }
        }
        try connection.execute("PRAGMA user_version = \(Self.schemaVersion)")
    }

    /// 2 → 3: the hash chain. The rows of the `signatures` table become `sign` entries in their
    /// order (creation time, then insertion), chained from the genesis hash, with an empty host and
    /// process 0 (not recorded before); `signatures` becomes a view of the current records.
    static func migrateToChain(_ connection: SQLiteConnection) throws {
        try connection.execute(
            """
            CREATE TABLE journal_entries (
                seq INTEGER PRIMARY KEY NOT NULL,
                kind TEXT NOT NULL,
                id TEXT NOT NULL,
                created_at REAL,
                provider_id TEXT,
                signer_subject TEXT,
                signer_fingerprint TEXT,
                document_name TEXT,
                document_size INTEGER,
                document_digest BLOB,
                digest_algorithm TEXT,
                format TEXT,
                detached INTEGER,
                signature_path TEXT,
                signature BLOB,
                host TEXT NOT NULL,
                pid INTEGER NOT NULL,
                previous_hash BLOB NOT NULL,
                hash BLOB NOT NULL
            );
            CREATE TABLE journal_current (id TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE journal_head (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), count INTEGER NOT NULL,
                hash BLOB NOT NULL);
            INSERT INTO journal_head VALUES (1, 0, zeroblob(32));
            """
        )
        try copyIntoChain(connection)
        try connection.execute(
            """
            DROP TABLE signatures;
            CREATE INDEX signatures_by_time ON journal_entries (created_at);
            CREATE INDEX signatures_by_provider ON journal_entries (provider_id, created_at);
            CREATE VIEW signatures AS
                SELECT e.id, e.created_at, e.provider_id, e.signer_subject, e.signer_fingerprint, e.document_name,
                    e.document_size, e.document_digest, e.digest_algorithm, e.format, e.detached, e.signature_path,
                    e.signature, e.host, e.pid, e.seq
                FROM journal_current c JOIN journal_entries e ON e.seq = c.seq;
            """
        )
    }

    /// Copies the rows of the version-2 `signatures` table into the chain (statements finalized
    /// on return, so the table can be dropped).
    private static func copyIntoChain(_ connection: SQLiteConnection) throws {
        let old = try connection.prepare(
            """
            SELECT id, created_at, provider_id, signer_subject, signer_fingerprint, document_name, document_size,
                document_digest, digest_algorithm, format, detached, signature_path, signature
            FROM signatures ORDER BY created_at, rowid
            """
        )
        var head = JournalHead.empty
        let insert = try connection.prepare(
            "INSERT INTO journal_entries (\(entryColumns)) VALUES (\(placeholders))"
        )
        let current = try connection.prepare("INSERT INTO journal_current (id, seq) VALUES (?1, ?2)")
        while try old.step() {
            var entry = JournalEntry(
                sequence: head.count + 1,
                kind: JournalEntry.Kind.sign.rawValue,
                recordID: old.text(0) ?? "",
                host: "",
                processID: 0,
                previousHash: head.hash,
                hash: []
            )
            entry.createdAt = old.double(1)
            entry.providerID = old.text(2)
            entry.signerSubject = old.text(3)
            entry.signerFingerprint = old.text(4)
            entry.documentName = old.text(5)
            entry.documentSize = old.int64(6)
            entry.documentDigest = old.blob(7)
            entry.digestAlgorithm = old.text(8)
            entry.format = old.text(9)
            entry.detached = old.int64(10) != 0
            entry.signaturePath = old.text(11)
            entry.signature = old.isNull(11) ? old.blob(12) : nil
            entry.hash = entry.chainedHash()
            insert.reset()
            try insert.bind(values(entry))
            _ = try insert.step()
            current.reset()
            try current.bind([.text(entry.recordID), .integer(entry.sequence)])
            _ = try current.step()
            head = entry.head
        }
        let setHead = try connection.prepare("UPDATE journal_head SET count = ?1, hash = ?2 WHERE singleton = 1")
        try setHead.bind([.integer(head.count), .blob(head.hash)])
        _ = try setHead.step()
    }
}
