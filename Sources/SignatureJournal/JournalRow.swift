import CertificateProviders

/// One row of `journal_entries` as a backend reads it (columns in ``JournalRow/columns`` order),
/// so both backends turn rows into entries with the same code.
package protocol JournalRow {
    func text(_ column: Int32) -> String?
    func bytes(_ column: Int32) -> [UInt8]?
    func integer(_ column: Int32) -> Int64?
    func double(_ column: Int32) -> Double?
}

/// The SQL both backends share (values are always bound as parameters, never put in here).
package enum JournalSQL {
    /// The columns of `journal_entries`, in ``JournalEntry``'s order, each with `prefix`.
    package static func columns(prefix: String = "") -> String {
        [
            "seq", "kind", "id", "created_at", "provider_id", "signer_subject", "signer_fingerprint", "document_name",
            "document_size", "document_digest", "digest_algorithm", "format", "detached", "signature_path",
            "signature", "host", "pid", "previous_hash", "hash",
        ].map { prefix + $0 }.joined(separator: ", ")
    }

    /// The current records' entries, newest first; `filter` is a constant `WHERE` clause or empty.
    package static func currentRecords(_ filter: String = "ORDER BY e.created_at DESC, e.seq DESC") -> String {
        "SELECT \(columns(prefix: "e.")) FROM journal_current c JOIN journal_entries e ON e.seq = c.seq \(filter)"
    }
}

extension JournalEntry {
    /// The entry a row holds; `detached` is read as an integer (SQLite) or a one-byte bool (PostgreSQL).
    package init(row: some JournalRow) {
        self.init(
            sequence: row.integer(0) ?? 0,
            kind: row.text(1) ?? "",
            recordID: row.text(2) ?? "",
            host: row.text(15) ?? "",
            processID: row.integer(16) ?? 0,
            previousHash: row.bytes(17) ?? [],
            hash: row.bytes(18) ?? []
        )
        createdAt = row.double(3)
        providerID = row.text(4)
        signerSubject = row.text(5)
        signerFingerprint = row.text(6)
        documentName = row.text(7)
        documentSize = row.integer(8)
        documentDigest = row.bytes(9)
        digestAlgorithm = row.text(10)
        format = row.text(11)
        detached = row.integer(12).map { $0 != 0 }
        signaturePath = row.text(13)
        signature = row.bytes(14)
    }

    /// The error for a `sign` entry whose record ID is already current.
    package var duplicateError: CertificateProviderError {
        CertificateProviderError(.alreadyExists, "the journal already has a signature with id \(recordID)")
    }
}

/// Runs `body` between `begin` and `commit`, calling `rollback` when it throws (both backends'
/// transactions).
package func inTransaction<R>(
    begin: () throws -> Void,
    commit: () throws -> Void,
    rollback: () -> Void,
    _ body: () throws -> R
) throws -> R {
    try begin()
    do {
        let result = try body()
        try commit()
        return result
    } catch {
        rollback()
        throw error
    }
}
