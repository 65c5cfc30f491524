internal import CSQLite
import CertificateProviders
import Foundation

/// Copies a WAL database's log back into the database file on a thread of its own, so that a
/// commit never waits for a checkpoint.
///
/// SQLite's automatic checkpoint runs inside the COMMIT that crosses its threshold: that commit
/// then also reads every page of the log, writes it to the database file and `fsync`s both, which
/// in a batch is a tenth of the CPU and a pause of the group being acknowledged. Here the writer
/// connection's WAL hook only asks (``request()``); this object's thread runs a `PASSIVE`
/// checkpoint on its own connection, beside the writer (SQLite lets one checkpoint run while a
/// connection writes). What a checkpoint does is unchanged: same frames, same `fsync`s, same
/// durability (``SignatureJournal`` runs `synchronous=NORMAL`).
///
/// The thread starts on the first request and ends when this object is released (it finishes a
/// checkpoint in progress first). A checkpoint that fails (another process holds the checkpoint
/// lock, the file cannot be opened) is tried again on the next request; when the log grows past
/// four times the threshold anyway, the writer checkpoints in its hook as SQLite would have.
final class SQLiteCheckpointer: @unchecked Sendable {
    /// What the thread and the writer share, guarded by `condition`. The thread holds this, never
    /// the checkpointer, so that releasing the checkpointer stops the thread.
    private final class State: @unchecked Sendable {
        let condition = NSCondition()
        var requested = false
        var stopping = false
        var started = false
        var finished = false
        /// Checkpoints run (for tests and diagnostics).
        var completed = 0
    }

    /// The database file.
    let path: String
    /// The number of frames in the log from which a checkpoint is requested after a commit.
    let threshold: Int32
    private let busyTimeoutMilliseconds: Int32
    private let state = State()

    init(path: String, threshold: Int32, busyTimeoutMilliseconds: Int32) {
        self.path = path
        self.threshold = threshold
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
    }

    deinit {
        let state = state
        state.condition.lock()
        state.stopping = true
        state.condition.broadcast()
        while state.started && !state.finished { state.condition.wait() }
        state.condition.unlock()
    }

    /// The number of checkpoints this object's thread has run.
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
            let busyTimeout = busyTimeoutMilliseconds
            let thread = Thread { Self.run(state, path: path, busyTimeoutMilliseconds: busyTimeout) }
            thread.name = "certsign journal checkpoint"
            thread.start()
        }
        state.condition.signal()
    }

    /// The thread: waits for a request, checkpoints, until stopped.
    private static func run(_ state: State, path: String, busyTimeoutMilliseconds: Int32) {
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
            state.condition.unlock()
            if connection == nil {
                connection = try? SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            }
            if connection?.checkpointPassively() == true {
                state.condition.lock()
                state.completed += 1
                state.condition.unlock()
            }
        }
    }
}

extension SQLiteConnection {
    /// Runs a `PASSIVE` checkpoint: copies what it can without waiting for readers or writers.
    /// Returns whether SQLite reported success.
    func checkpointPassively() -> Bool {
        withHandle { sqlite3_wal_checkpoint_v2($0, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) == SQLITE_OK }
    }
}
