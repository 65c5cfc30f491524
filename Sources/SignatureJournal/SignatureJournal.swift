import CertificateProviders
public import Foundation

/// The record of signatures: one row per signature made, in a tamper-evident hash chain, kept in
/// an SQLite file (the default, one machine) or a PostgreSQL database (many workers on many
/// machines).
///
/// Every change is an entry appended to one chain: a signature made (`sign`), its stored fields
/// replaced (`update`), its record removed (`remove`). Each entry carries
/// `hash = SHA-256(previous hash ‖ canonical encoding of the entry)` (see "The hash chain" in the
/// module's documentation), appended in one total order (SQLite: the write lock; PostgreSQL: the
/// head row locked `FOR UPDATE`), so ``verify(expecting:)`` finds the first entry changed, deleted or
/// inserted behind the journal's back, and ``head()`` gives a checkpoint to publish.
///
/// What a record promises (**acknowledged**): a signature is acknowledged once its record is
/// committed here. The coordinator writes a signature file completely (temporary file, `fsync`,
/// rename) and syncs its directory before it commits the record, so every record that survives a
/// crash names a complete `.p7s`. Batch signing (`SigningCoordinator.signEach` in `Signing`)
/// commits once per group of at most `SigningCoordinator.batchGroupSize` records: a killed batch
/// keeps every group committed before the kill, and may leave complete `.p7s` files of the group
/// in progress without a record (never a record without its file, never a torn `.p7s`).
public actor SignatureJournal {
    /// The SQLite schema version this build writes.
    public static let schemaVersion: Int64 = SQLiteJournalBackend.schemaVersion
    /// The `application_id` marking a certsign SQLite journal ("CSJ1").
    public static let applicationID: Int64 = SQLiteJournalBackend.applicationID

    /// Where the journal is.
    public nonisolated let location: JournalLocation
    private let backend: any JournalBackend
    /// Opens another connection to the same journal, for claims of pending work (nil in memory:
    /// claims then run on this journal's own connection).
    let reopen: (@Sendable () throws -> SignatureJournal)?
    /// Journals of other connections, each free for the next claim.
    var idleClaimJournals: [SignatureJournal] = []
    /// Whether a claim's transaction is open on this journal's connection: appends then join it.
    var claimIsOpen = false

    /// The database file of an SQLite journal (for a PostgreSQL journal, a URL naming its URI
    /// without any password).
    public nonisolated var url: URL {
        switch location {
        case .sqlite(let url): return url
        case .postgreSQL: return URL(string: location.description) ?? URL(fileURLWithPath: "/")
        }
    }

    /// Opens the SQLite journal at `url`, creating it (and its schema) when the file does not
    /// exist, and migrating an older schema (a version-2 journal gets its hash chain computed over
    /// its rows in their order).
    ///
    /// - Parameters:
    ///   - url: the database file; its directory must exist. A new file is created with mode 0600;
    ///     a symbolic link, a file that is not a regular file, or one another user owns is refused
    ///     (the journal names the documents you signed).
    ///   - busyTimeout: how long to wait for another process's write lock (default 10 s).
    /// - Throws: `.storeCorrupted` when the file is not SQLite, belongs to another application or
    ///   has a newer schema; `.fileSystem` when it cannot be opened; `.timeout` when it stays locked.
    ///
    /// A file named `:memory:` (SQLite's name for an in-memory database) is not created: that URL
    /// opens a journal in memory, as ``inMemory()`` does.
    public init(url: URL, busyTimeout: Duration = .seconds(10)) throws {
        try self.init(url: url, busyTimeout: busyTimeout, checkpointThreshold: Self.checkpointThreshold)
    }

    /// A new, empty journal that lives in this process's memory only: nothing is written to disk,
    /// and its records are gone when the journal is released. It keeps the same hash chain and
    /// answers every call as a file journal does; for tests, and for apps that sign without keeping
    /// a history. ``location`` is `sqlite::memory:` (``inMemoryURL``).
    /// - Throws: `.fileSystem` when SQLite cannot allocate the database.
    public static func inMemory() throws -> SignatureJournal {
        try SignatureJournal(url: inMemoryURL)
    }

    /// The URL of a journal in memory: a file URL whose last component is `:memory:`.
    public static let inMemoryURL = URL(fileURLWithPath: "/:memory:")

    /// Whether this journal lives in memory only (``inMemory()``).
    public nonisolated var isInMemory: Bool {
        guard case .sqlite(let url) = location else { return false }
        return Self.namesMemory(url)
    }

    /// Whether `url` is SQLite's in-memory name rather than a file: its last component is `:memory:`.
    static func namesMemory(_ url: URL) -> Bool { url.lastPathComponent == ":memory:" }

    /// Opens the SQLite journal at `location` as ``init(url:busyTimeout:)`` (a `:memory:` file name
    /// opens a journal in memory).
    ///
    /// A PostgreSQL journal needs libpq, which this module does not link: open one with
    /// `SignatureJournal(opening:busyTimeout:)` of the `SignatureJournalPostgres` product.
    ///
    /// - Throws: `.unsupportedOperation` for a ``JournalLocation/postgreSQL(_:)`` location (the
    ///   reason names the product to add); the errors of ``init(url:busyTimeout:)``.
    public init(location: JournalLocation, busyTimeout: Duration = .seconds(10)) throws {
        switch location {
        case .sqlite(let url):
            try self.init(url: url, busyTimeout: busyTimeout, checkpointThreshold: Self.checkpointThreshold)
        case .postgreSQL:
            throw CertificateProviderError.unsupportedOperation(
                "a PostgreSQL journal (\(location)) needs the SignatureJournalPostgres product: add it, import "
                    + "SignatureJournalPostgres and open the journal with SignatureJournal(opening:)"
            )
        }
    }

    /// A journal on `backend` (another product's backend, such as PostgreSQL's).
    /// - Parameter reopen: opens another connection to the same journal, for claims of pending work.
    package init(
        location: JournalLocation,
        backend: any JournalBackend,
        reopen: (@Sendable () throws -> SignatureJournal)? = nil
    ) {
        self.location = location
        self.backend = backend
        self.reopen = reopen
    }

    /// The number of frames (pages) in the WAL from which a commit asks for a checkpoint: 4000, about
    /// 16 MB (SQLite's own default is 1000). The checkpoint runs on a thread of its own
    /// (`SQLiteCheckpointer`), so no commit waits for it.
    static let checkpointThreshold: Int32 = 4000

    /// ``init(url:busyTimeout:)`` with another checkpoint threshold (tests).
    init(url: URL, busyTimeout: Duration = .seconds(10), checkpointThreshold: Int32) throws {
        if Self.namesMemory(url) {
            location = .sqlite(Self.inMemoryURL)
            backend = try SQLiteJournalBackend(inMemory: ())
            reopen = nil
            return
        }
        location = .sqlite(url)
        backend = try SQLiteJournalBackend(url: url, busyTimeout: busyTimeout, checkpointThreshold: checkpointThreshold)
        reopen = { try SignatureJournal(url: url, busyTimeout: busyTimeout, checkpointThreshold: checkpointThreshold) }
    }

    /// The checkpoints the SQLite journal's own thread has run (tests).
    var backgroundCheckpoints: Int {
        (backend as? SQLiteJournalBackend)?.connection.checkpointer?.completedCheckpoints ?? 0
    }

    // MARK: Records

    /// Adds a record.
    /// - Throws: `.alreadyExists` for a duplicate ID; `.storeCorrupted`, `.fileSystem`, `.timeout`,
    ///   and for PostgreSQL `.network`, `.authenticationFailed` (a role that may not write).
    public func append(_ record: SignatureRecord) throws {
        try append(contentsOf: [record])
    }

    /// Adds several records in one transaction: all or none.
    /// - Throws: `.alreadyExists` for a duplicate ID (nothing is added); the errors of ``append(_:)``.
    public func append(contentsOf records: [SignatureRecord]) throws {
        guard !records.isEmpty else { return }
        try appendChain { head, _ in
            var previous = head
            return records.map { record in
                let entry = JournalEntry(.sign, record, after: previous)
                previous = entry.head
                return entry
            }
        }
    }

    /// The current records (not removed; the latest fields of updated ones), newest first.
    public func records() throws -> [SignatureRecord] { try backend.records() }

    /// The current record with `id`, or nil.
    public func record(id: String) throws -> SignatureRecord? { try backend.record(id: id) }

    /// Removes the record with `id` by appending a `remove` entry (the chain keeps the record; the
    /// signature file, if any, stays where it is).
    /// - Returns: whether a current record was removed.
    @discardableResult
    public func remove(id: String) throws -> Bool { try remove(ids: [id]) == 1 }

    /// Removes the records with `ids` in one transaction, one `remove` entry each (their signature
    /// files stay where they are).
    /// - Returns: how many current records were removed.
    @discardableResult
    public func remove(ids: [String]) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        var removed = 0
        try appendChain { head, currentSequence in
            var previous = head
            var entries: [JournalEntry] = []
            var seen = Set<String>()
            for id in ids where seen.insert(id).inserted {
                guard try currentSequence(id) != nil else { continue }
                let entry = JournalEntry(removing: id, after: previous)
                previous = entry.head
                entries.append(entry)
            }
            removed = entries.count
            return entries
        }
        return removed
    }

    /// Replaces the stored fields of the record with `record.id` by appending an `update` entry
    /// (format and signature bytes change when a signature is upgraded to CAdES-T).
    /// - Throws: `.notStored` when there is no such record; the errors of ``append(_:)``.
    public func update(_ record: SignatureRecord) throws {
        var found = false
        try appendChain { head, currentSequence in
            guard try currentSequence(record.id) != nil else { return [] }
            found = true
            return [JournalEntry(.update, record, after: head)]
        }
        guard found else {
            throw CertificateProviderError(.notStored, "the journal has no signature with id \(record.id)")
        }
    }

    /// The number of current records.
    public func count() throws -> Int { try backend.count() }

    /// The chain's head as stored: the number of entries and the last entry's hash. Publish it to
    /// prove later that the history up to it did not change (``verify(expecting:)``).
    public func head() throws -> JournalHead { try backend.head() }

    /// The schema version of the store (SQLite and PostgreSQL count their versions apart).
    public func storedSchemaVersion() throws -> Int64 { try backend.schemaVersion() }

    /// Checks the store itself: SQLite's integrity check (PostgreSQL: that it answers).
    /// - Throws: `.storeCorrupted` with the findings when the database is damaged.
    public func checkIntegrity() throws { try backend.checkIntegrity() }

    /// Appends to the chain, inside the claim's transaction while one is open on this connection.
    private func appendChain(
        _ make: (_ head: JournalHead, _ currentSequence: (String) throws -> Int64?) throws -> [JournalEntry]
    ) throws {
        if claimIsOpen {
            try backend.appendEntriesInClaim(make)
        } else {
            try backend.appendEntries(make)
        }
    }

    /// The backend, for the chain walk in ``SignatureJournal/verify(expecting:)``.
    var chainBackend: any JournalBackend { backend }
}
