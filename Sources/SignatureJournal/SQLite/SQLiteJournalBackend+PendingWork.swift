import CertificateProviders
import Foundation

/// The queue of pending work in an SQLite journal: the table `journal_pending`; a claim holds the
/// write lock (`BEGIN IMMEDIATE`), so claims of all processes take turns, one item each.
extension SQLiteJournalBackend {
    /// 3 → 4: the queue of pending work.
    static let pendingWorkMigration = """
        CREATE TABLE journal_pending (
            id TEXT PRIMARY KEY NOT NULL,
            state TEXT NOT NULL,
            payload BLOB NOT NULL,
            output_path TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            not_before REAL NOT NULL
        );
        CREATE INDEX journal_pending_due ON journal_pending (state, not_before);
        """

    func enqueuePendingWork(_ items: [PendingWorkItem]) throws {
        try connection.writeTransaction {
            for item in items {
                do {
                    try withStatement(
                        "INSERT INTO journal_pending (\(PendingWorkSQL.columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
                    ) {
                        try $0.bind(Self.values(item))
                        _ = try $0.step()
                    }
                } catch let error as CertificateProviderError where error.code == .alreadyExists {
                    throw PendingWorkItem.duplicate(item.id)
                }
            }
        }
    }

    func pendingWork(in states: Set<PendingWorkState>?) throws -> [PendingWorkItem] {
        let filter = states.map { "WHERE state IN \(PendingWorkSQL.stateList($0))" } ?? ""
        let query = try connection.prepare(
            "SELECT \(PendingWorkSQL.columns) FROM journal_pending \(filter) \(PendingWorkSQL.listingOrder)"
        )
        var items: [PendingWorkItem] = []
        while try query.step() {
            items.append(try PendingWorkItem(row: SQLiteRow(statement: query), location: location))
        }
        return items
    }

    func pendingWorkItem(id: String) throws -> PendingWorkItem? {
        try withStatement("SELECT \(PendingWorkSQL.columns) FROM journal_pending WHERE id = ?1") { query in
            try query.bind([.text(id)])
            return try query.step() ? PendingWorkItem(row: SQLiteRow(statement: query), location: location) : nil
        }
    }

    func beginWriteTransaction() throws { try connection.execute("BEGIN IMMEDIATE") }

    func commitTransaction() throws { try connection.execute("COMMIT") }

    func rollbackTransaction() throws { try connection.execute("ROLLBACK") }

    /// The write lock the transaction holds keeps every other claim out: the item needs no lock of its own.
    func lockPendingWorkItem(id: String) throws -> PendingWorkItem? { try pendingWorkItem(id: id) }

    func lockNextDuePendingWorkItem(in states: Set<PendingWorkState>, now: Date) throws -> PendingWorkItem? {
        try withStatement(
            "SELECT \(PendingWorkSQL.columns) FROM journal_pending WHERE state IN "
                + "\(PendingWorkSQL.stateList(states)) AND not_before <= ?1 ORDER BY not_before, id LIMIT 1"
        ) { query in
            try query.bind([.real(now.timeIntervalSince1970)])
            return try query.step() ? PendingWorkItem(row: SQLiteRow(statement: query), location: location) : nil
        }
    }

    func writePendingWorkItem(_ item: PendingWorkItem) throws {
        try withStatement(
            "UPDATE journal_pending SET state = ?2, updated_at = ?3, attempts = ?4, last_error = ?5, not_before = ?6 "
                + "WHERE id = ?1"
        ) {
            try $0.bind([
                .text(item.id), .text(item.state.rawValue), .real(item.updatedAt.timeIntervalSince1970),
                .integer(Int64(item.attempts)), item.lastError.map { .text($0) } ?? .null,
                .real(item.notBefore.timeIntervalSince1970),
            ])
            _ = try $0.step()
        }
    }

    private static func values(_ item: PendingWorkItem) -> [SQLiteValue] {
        [
            .text(item.id), .text(item.state.rawValue), .blob(Array(item.payload)),
            item.outputPath.map { .text($0) } ?? .null, .real(item.createdAt.timeIntervalSince1970),
            .real(item.updatedAt.timeIntervalSince1970), .integer(Int64(item.attempts)),
            item.lastError.map { .text($0) } ?? .null, .real(item.notBefore.timeIntervalSince1970),
        ]
    }
}
