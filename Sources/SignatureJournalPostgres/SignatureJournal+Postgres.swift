public import SignatureJournal

extension SignatureJournal {
    /// Opens the journal at `location`: an SQLite file as `init(url:busyTimeout:)`, or a
    /// PostgreSQL database, whose schema is created on first use (once, under an advisory lock,
    /// however many workers start at once) and migrated forward.
    ///
    /// `SignatureJournal(location:)` of the `SignatureJournal` module opens SQLite files only, so
    /// that an app on SQLite does not link libpq; this initializer is the one that also connects to
    /// PostgreSQL.
    ///
    /// - Parameters:
    ///   - location: where the journal is (`JournalLocation(parsing:)` reads `--journal` forms).
    ///   - busyTimeout: how long an SQLite journal waits for another process's write lock.
    /// - Throws: for PostgreSQL, `.network` when the server cannot be reached, `.authenticationFailed`
    ///   when it refuses the role or its password, `.invalidParameter` for a missing database or a
    ///   connection string that holds a password, `.storeCorrupted` for a schema newer than this
    ///   build's; for SQLite, the errors of `init(url:busyTimeout:)`.
    public init(opening location: JournalLocation, busyTimeout: Duration = .seconds(10)) throws {
        switch location {
        case .sqlite:
            try self.init(location: location, busyTimeout: busyTimeout)
        case .postgreSQL(let connectionString):
            try self.init(
                location: location,
                backend: PostgresJournalBackend(connectionString: connectionString),
                reopen: { try SignatureJournal(opening: location, busyTimeout: busyTimeout) }
            )
        }
    }
}
