import CertificateProviders
import Foundation

/// The queue of pending work a ``JournalBackend`` keeps beside the chain (`journal_pending`).
///
/// A claim is a transaction held while the item is worked on: ``beginClaim(id:in:now:)`` opens it
/// and locks one item (PostgreSQL: the row `FOR UPDATE SKIP LOCKED`; SQLite: the write lock, so one
/// claim at a time), ``appendEntriesInClaim(_:)`` appends to the chain inside it, and
/// ``endClaim(writing:)`` writes the item's new state and commits both at once. A process that dies
/// while it holds a claim loses its connection; the database rolls the transaction back, and the
/// item is open again.
///
/// The claims and the cancelling of an item are written once, in this protocol's extension; a
/// backend supplies the statements: its transactions, its locking reads and its write of an item.
package protocol PendingWorkStore: AnyObject {
    /// Queues `items` in one transaction.
    /// - Throws: `.alreadyExists` naming the ID when one is queued already (nothing is queued).
    func enqueuePendingWork(_ items: [PendingWorkItem]) throws

    /// The items in `states` (every item when nil), oldest first.
    func pendingWork(in states: Set<PendingWorkState>?) throws -> [PendingWorkItem]

    /// The item with `id`, or nil.
    func pendingWorkItem(id: String) throws -> PendingWorkItem?

    /// ``JournalBackend/appendEntries(_:)`` inside the open claim's transaction.
    func appendEntriesInClaim(
        _ make: (_ head: JournalHead, _ currentSequence: (String) throws -> Int64?) throws -> [JournalEntry]
    ) throws

    /// Begins a transaction that writes (SQLite: `BEGIN IMMEDIATE`, taking the write lock at once;
    /// PostgreSQL: `BEGIN`, its rows locked as they are read).
    func beginWriteTransaction() throws

    /// Commits the open transaction.
    func commitTransaction() throws

    /// Rolls the open transaction back.
    func rollbackTransaction() throws

    /// Inside a write transaction: the item `id`, locked until the transaction ends (waiting for a
    /// claim that holds it), or nil.
    func lockPendingWorkItem(id: String) throws -> PendingWorkItem?

    /// Inside a write transaction: the open item in `states` that is due (`notBefore` ≤ `now`) the
    /// longest and that no other claim holds, locked until the transaction ends; nil when none is.
    func lockNextDuePendingWorkItem(in states: Set<PendingWorkState>, now: Date) throws -> PendingWorkItem?

    /// Inside a write transaction: writes the item's state, times, attempts and last error over its
    /// row.
    func writePendingWorkItem(_ item: PendingWorkItem) throws
}

extension PendingWorkStore {
    /// Runs `body` in a write transaction (``beginWriteTransaction()``), committed when it returns and
    /// rolled back when it throws.
    package func writeTransaction<R>(_ body: () throws -> R) throws -> R {
        try inTransaction(
            begin: beginWriteTransaction,
            commit: commitTransaction,
            rollback: { try? rollbackTransaction() },
            body
        )
    }

    /// Marks the open item `id` cancelled, waiting for a claim on it to end.
    /// - Returns: the cancelled item.
    /// - Throws: `.notStored` when there is none; its ``PendingWorkItem/finalStateError`` when it is
    ///   final already (unchanged).
    package func cancelPendingWork(id: String, at date: Date) throws -> PendingWorkItem {
        try writeTransaction {
            guard var item = try lockPendingWorkItem(id: id) else { throw PendingWorkItem.unknown(id) }
            try item.cancel(at: date)
            try writePendingWorkItem(item)
            return item
        }
    }

    /// Opens a claim: begins a transaction and locks the item `id` (waiting for another claim on it
    /// to end), or, when `id` is nil, the open item in `states` that is due (`notBefore` ≤ `now`)
    /// the longest and that no other claim holds.
    /// - Returns: the item, or nil (and no transaction) when none is due.
    /// - Throws: `.notStored` for an unknown `id`; the item's ``PendingWorkItem/finalStateError``
    ///   when it is final; `.invalidParameter` when it is open but not in `states`. No transaction
    ///   stays open when it throws.
    package func beginClaim(id: String?, in states: Set<PendingWorkState>, now: Date) throws -> PendingWorkItem? {
        try beginWriteTransaction()
        do {
            let item: PendingWorkItem?
            if let id {
                guard let found = try lockPendingWorkItem(id: id) else { throw PendingWorkItem.unknown(id) }
                try found.checkClaimable(in: states)
                item = found
            } else {
                item = try lockNextDuePendingWorkItem(in: states, now: now)
            }
            if item == nil { try rollbackTransaction() }
            return item
        } catch {
            abandonClaim()
            throw error
        }
    }

    /// Writes `item` (its state, attempts, last error, times) over the claimed row and commits the
    /// claim with every entry appended in it.
    package func endClaim(writing item: PendingWorkItem) throws {
        try writePendingWorkItem(item)
        try commitTransaction()
    }

    /// Rolls the claim back: the item and the chain as they were before it.
    package func abandonClaim() { try? rollbackTransaction() }
}

/// The SQL both backends share for the queue (values are always bound as parameters).
package enum PendingWorkSQL {
    /// The columns of `journal_pending`, in ``PendingWorkItem/init(row:)``'s order.
    package static let columns =
        "id, state, payload, output_path, created_at, updated_at, attempts, last_error, not_before"

    /// The queue's states as a constant `IN (…)` list of quoted names (they are this build's constants).
    package static func stateList(_ states: Set<PendingWorkState>) -> String {
        "(" + states.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ") + ")"
    }

    /// `ORDER BY` of listings: oldest first.
    package static let listingOrder = "ORDER BY created_at, id"
}

extension PendingWorkItem {
    /// The item a row of `journal_pending` holds (columns in ``PendingWorkSQL/columns`` order).
    /// - Throws: `.storeCorrupted` naming the item when its state is not one this build knows.
    package init(row: some JournalRow, location: String) throws {
        let id = row.text(0) ?? ""
        guard let state = PendingWorkState(rawValue: row.text(1) ?? "") else {
            throw CertificateProviderError(
                .storeCorrupted,
                "the journal \(location) holds pending item \(id) in an unknown state '\(row.text(1) ?? "")'"
            )
        }
        self.init(
            id: id,
            state: state,
            payload: Data(row.bytes(2) ?? []),
            outputPath: row.text(3),
            createdAt: Date(timeIntervalSince1970: row.double(4) ?? 0)
        )
        updatedAt = Date(timeIntervalSince1970: row.double(5) ?? 0)
        attempts = Int(row.integer(6) ?? 0)
        lastError = row.text(7)
        notBefore = Date(timeIntervalSince1970: row.double(8) ?? 0)
    }

    /// Checks that a claim may take this item for `states`.
    /// - Throws: ``finalStateError``; `.invalidParameter` when it is open in another state.
    package func checkClaimable(in states: Set<PendingWorkState>) throws {
        guard state.isOpen else { throw finalStateError }
        guard states.contains(state) else {
            throw CertificateProviderError.invalidParameter(
                "pending item \(id) is \(state.rawValue), not \(states.map(\.rawValue).sorted().joined(separator: " or "))"
            )
        }
    }
}
