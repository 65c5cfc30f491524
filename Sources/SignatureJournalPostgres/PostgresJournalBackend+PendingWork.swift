import CertificateProviders
import Foundation
import SignatureJournal

/// The queue of pending work in a PostgreSQL journal: the table `journal_pending`; a claim locks
/// its row `FOR UPDATE SKIP LOCKED` in a transaction held while the item is worked on, so workers
/// on many machines take different items at once, and a worker whose connection drops (killed,
/// network gone) has its transaction rolled back by the server: the item is open again.
extension PostgresJournalBackend {
    /// 1 → 2: the queue of pending work.
    static let pendingWorkMigration = """
        CREATE TABLE journal_pending (
            id TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            payload BYTEA NOT NULL,
            output_path TEXT,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            attempts BIGINT NOT NULL DEFAULT 0,
            last_error TEXT,
            not_before DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX journal_pending_due ON journal_pending (state, not_before);
        """

    func enqueuePendingWork(_ items: [PendingWorkItem]) throws {
        try connection.transaction {
            for item in items {
                do {
                    try connection.executePrepared(
                        "certsign_enqueue",
                        "INSERT INTO journal_pending (\(PendingWorkSQL.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                        Self.values(item)
                    )
                } catch let error as CertificateProviderError where error.code == .alreadyExists {
                    throw PendingWorkItem.duplicate(item.id)
                }
            }
        }
    }

    func pendingWork(in states: Set<PendingWorkState>?) throws -> [PendingWorkItem] {
        let filter = states.map { "WHERE state IN \(PendingWorkSQL.stateList($0))" } ?? ""
        return try items(
            connection.execute(
                "SELECT \(PendingWorkSQL.columns) FROM journal_pending \(filter) \(PendingWorkSQL.listingOrder)"
            )
        )
    }

    func pendingWorkItem(id: String) throws -> PendingWorkItem? {
        try items(
            connection.execute("SELECT \(PendingWorkSQL.columns) FROM journal_pending WHERE id = $1", [.text(id)])
        ).first
    }

    func beginWriteTransaction() throws { try connection.execute("BEGIN") }

    func commitTransaction() throws { try connection.execute("COMMIT") }

    func rollbackTransaction() throws { try connection.execute("ROLLBACK") }

    /// The item `id`, its row locked `FOR UPDATE` until the transaction ends.
    func lockPendingWorkItem(id: String) throws -> PendingWorkItem? {
        try items(
            connection.execute(
                "SELECT \(PendingWorkSQL.columns) FROM journal_pending WHERE id = $1 FOR UPDATE",
                [.text(id)]
            )
        ).first
    }

    /// The due item, `FOR UPDATE SKIP LOCKED`: workers on many machines take different items at once.
    func lockNextDuePendingWorkItem(in states: Set<PendingWorkState>, now: Date) throws -> PendingWorkItem? {
        try items(
            connection.execute(
                "SELECT \(PendingWorkSQL.columns) FROM journal_pending WHERE state IN "
                    + "\(PendingWorkSQL.stateList(states)) AND not_before <= $1 ORDER BY not_before, id "
                    + "LIMIT 1 FOR UPDATE SKIP LOCKED",
                [.double(now.timeIntervalSince1970)]
            )
        ).first
    }

    func writePendingWorkItem(_ item: PendingWorkItem) throws {
        try connection.executePrepared(
            "certsign_write_pending",
            "UPDATE journal_pending SET state = $2, updated_at = $3, attempts = $4, last_error = $5, not_before = $6 "
                + "WHERE id = $1",
            [
                .text(item.id), .text(item.state.rawValue), .double(item.updatedAt.timeIntervalSince1970),
                .integer(Int64(item.attempts)), item.lastError.map { .text($0) } ?? .null(PostgresValue.textType),
                .double(item.notBefore.timeIntervalSince1970),
            ]
        )
    }

    private func items(_ result: PostgresResult) throws -> [PendingWorkItem] {
        try (0..<result.rows).map { try PendingWorkItem(row: PostgresRow(result: result, row: $0), location: location) }
    }

    private static func values(_ item: PendingWorkItem) -> [PostgresValue] {
        [
            .text(item.id), .text(item.state.rawValue), .bytes(Array(item.payload)),
            item.outputPath.map { .text($0) } ?? .null(PostgresValue.textType),
            .double(item.createdAt.timeIntervalSince1970), .double(item.updatedAt.timeIntervalSince1970),
            .integer(Int64(item.attempts)), item.lastError.map { .text($0) } ?? .null(PostgresValue.textType),
            .double(item.notBefore.timeIntervalSince1970),
        ]
    }
}
