internal import CSQLite
import CertificateProviders
import Foundation

/// Copies a WAL database's log back into the database file on a thread of its own, so that a
/// commit never waits for a checkpoint.
///
/// SQLite's automatic checkpoint runs inside the COMMIT that crosses its threshold: that commit
/// then also reads every page of the log, writes it to the database file and `fsync`s both, which
/// in a batch paused the group being acknowledged for 100–300 ms. Here the writer connection's WAL
/// hook only asks (``request()``); this object's thread, on its own connection, runs a `PASSIVE`
/// checkpoint beside the writer (SQLite lets one checkpoint run while a connection writes), then a
/// `RESTART` that waits at most ``restartWaitMilliseconds`` for the writer lock: it copies the few
/// frames committed meanwhile and lets the next commit start the log again from its beginning.
/// Without the `RESTART`, a log that is never fully copied between two commits (a batch commits
/// continuously) is never restarted and grows without bound. What a checkpoint does is unchanged:
/// same frames, same `fsync`s, same durability (``SignatureJournal`` runs `synchronous=NORMAL`).
///
/// The thread starts on the first request and ends when this object is released (it finishes a
/// checkpoint in progress first). A checkpoint that fails (another process holds the checkpoint
/// lock, the file cannot be opened) is tried again on the next request. When the log grows past
/// four times the threshold anyway (this thread is behind, or the writer never pauses), the writer
/// checkpoints in its hook as SQLite would have, after waiting for this thread's checkpoint in
/// progress (``whileNotCheckpointing(_:)``: SQLite refuses a second checkpoint outright, it does not
/// wait for the first).
final class SQLiteCheckpointer: @unchecked Sendable {
    // @unchecked: every mutable field is in `State`, read and written only under its condition.

    /// What the thread and the writer share, guarded by `condition`. The thread holds this, never
    /// the checkpointer, so that releasing the checkpointer stops the thread.
    private final class State: @unchecked Sendable {
        // @unchecked: every field is read and written only while `condition` is locked.
        let condition = NSCondition()
        var requested = false
        var stopping = false
        var started = false
        var finished = false
        /// The thread is running a checkpoint.
        var checkpointing = false
        /// Checkpoints that copied the log (for tests and diagnostics).
        var completed = 0
    }

    /// The database file.
    let path: String
    /// The number of frames in the log from which a checkpoint is requested after a commit.
    let threshold: Int32
    /// How long the thread's `RESTART` waits for the writer lock and for readers of the log (the
    /// busy timeout of its connection); a writer waits at most this long plus one short copy.
    static let restartWaitMilliseconds: Int32 = 20
    private let state = State()

    init(path: String, threshold: Int32) {
        self.path = path
        self.threshold = threshold
    }

    deinit {
        let state = state
        state.condition.lock()
        state.stopping = true
        state.condition.broadcast()
        while state.started && !state.finished { state.condition.wait() }
        state.condition.unlock()
    }

    /// The number of checkpoints this object's thread has run that copied the log.
    var completedCheckpoints: Int {
        state.condition.lock()
        defer { state.condition.unlock() }
        return state.completed
    }

    /// Asks for a checkpoint; starts the thread on first use. Cheap: called from a WAL hook.
    func request() {
        let state = state
        state.condition.lock()
        defer { state.condition.unlock() }
        guard !state.stopping else { return }
        state.requested = true
        if !state.started {
            state.started = true
            let path = path
            let thread = Thread { Self.run(state, path: path) }
            thread.name = "certsign journal checkpoint"
            thread.start()
        }
        state.condition.signal()
    }

    /// Runs `body` once this object's thread is not checkpointing, and keeps it from starting one
    /// until `body` returns.
    func whileNotCheckpointing<R>(_ body: () -> R) -> R {
        let state = state
        state.condition.lock()
        while state.checkpointing { state.condition.wait() }
        // Holding the lock keeps the thread from setting `checkpointing` again.
        defer { state.condition.unlock() }
        return body()
    }

    /// The thread: waits for a request, checkpoints, until stopped.
    private static func run(_ state: State, path: String) {
        var connection: SQLiteConnection?
        while true {
            state.condition.lock()
            while !state.requested && !state.stopping { state.condition.wait() }
            if state.stopping {
                // Closed before `finished` is set, so that nothing of ours is open once the
                // checkpointer is gone.
                connection = nil
                state.finished = true
                state.condition.broadcast()
                state.condition.unlock()
                return
            }
            state.requested = false
            state.checkpointing = true
            state.condition.unlock()

            if connection == nil { connection = try? openConnection(path) }
            let copied = connection?.checkpointThenRestart() ?? false

            state.condition.lock()
            state.checkpointing = false
            if copied { state.completed += 1 }
            state.condition.broadcast()
            state.condition.unlock()
        }
    }

    /// The thread's connection, which knows the file is in WAL mode: a new connection learns that
    /// only when it first reads the database, and until then a checkpoint is a no-op that reports
    /// success (with a log of -1).
    private static func openConnection(_ path: String) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: restartWaitMilliseconds)
        guard try connection.text("PRAGMA journal_mode")?.lowercased() == "wal" else {
            throw CertificateProviderError(.fileSystem, "the signature journal '\(path)' is not in WAL mode")
        }
        return connection
    }
}

extension SQLiteConnection {
    /// Runs a `PASSIVE` checkpoint (copies what it can without waiting for the writer or readers),
    /// then a `RESTART` (waits for the writer lock and readers within the busy timeout, copies the
    /// rest, so that the next commit starts the log again). Returns whether the log was copied.
    func checkpointThenRestart() -> Bool {
        withHandle { handle in
            var log: Int32 = -1
            var copied: Int32 = -1
            guard sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &copied) == SQLITE_OK,
                log >= 0
            else { return false }
            // SQLITE_BUSY (the writer kept its lock, or a reader the log) is fine: the PASSIVE copy
            // stands, and the next request tries again.
            _ = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_RESTART, nil, nil)
            return true
        }
    }
}
