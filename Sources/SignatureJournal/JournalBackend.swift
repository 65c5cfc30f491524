/// Where a ``SignatureJournal`` keeps its hash chain: SQLite (``SQLiteJournalBackend``) or
/// PostgreSQL (``PostgresJournalBackend``).
///
/// A backend stores three things: the chain (`journal_entries`, one ``JournalEntry`` per row,
/// sequence 1, 2, 3, …), the index of current records (`journal_current`: record ID → the
/// sequence of its latest `sign` or `update` entry) and the head (`journal_head`: one row, the
/// count and hash of the last entry). The chain logic (hashes, what each entry kind does) is the
/// journal's, written once; a backend only stores, reads and serialises appends: one append holds
/// the chain's lock from reading the head to its commit, so every entry follows exactly one other.
///
/// It also keeps the queue of pending work (``PendingWorkStore``), whose transactions its appends
/// share.
///
/// Used by one actor at a time (the journal's), so implementations need not be thread-safe.
package protocol JournalBackend: PendingWorkStore {
    /// Where the journal is, for messages: a path or a URI without any password.
    var location: String { get }

    /// The schema version of the store (after migration on open, this build's).
    func schemaVersion() throws -> Int64

    /// The current records, newest first (by creation time, then by sequence).
    func records() throws -> [SignatureRecord]

    /// The current record with `id`, or nil.
    func record(id: String) throws -> SignatureRecord?

    /// The number of current records.
    func count() throws -> Int

    /// The head as stored.
    func head() throws -> JournalHead

    /// At most `limit` entries with a sequence above `sequence`, in sequence order (for walking
    /// the chain page by page).
    func entries(after sequence: Int64, limit: Int) throws -> [JournalEntry]

    /// The current index as stored: record ID → sequence.
    func currentIndex() throws -> [String: Int64]

    /// Runs `body` with every read in it seeing one snapshot (a chain walk while workers append).
    func readSnapshot<R>(_ body: () throws -> R) throws -> R

    /// Checks the store itself (SQLite's integrity check; PostgreSQL: a query).
    func checkIntegrity() throws
}

extension JournalBackend {
    /// Appends entries in one transaction, all or none.
    ///
    /// Under the chain's lock (SQLite: the write lock; PostgreSQL: the head row `FOR UPDATE`) the
    /// backend reads the head and calls `make` with it and a look-up of the current sequence of a
    /// record ID; `make` returns the entries to append, chained after that head. The backend then
    /// inserts them, updates the current index (`sign` inserts: an ID already current throws
    /// `.alreadyExists` and nothing is stored; `update` re-points; `remove` deletes) and the head,
    /// and commits.
    package func appendEntries(
        _ make: (_ head: JournalHead, _ currentSequence: (String) throws -> Int64?) throws -> [JournalEntry]
    ) throws {
        try writeTransaction { try appendEntriesInClaim(make) }
    }
}
