import CertificateProviders
import Foundation
import SignatureJournal
import SignatureJournalPostgres

/// `certsign journal migrate --to URL`: copies the journal's chain into another (SQLite → PostgreSQL).
extension Commands {
    struct JournalMigrateOptions: CommandOptions {
        var destination: String?

        static var options: [OptionBinding<Self>] {
            [
                .value(
                    \.destination,
                    "--to",
                    "URL",
                    "the journal to copy into: postgresql://USER@HOST:PORT/DATABASE (empty; password from "
                        + "PGPASSWORD, ~/.pgpass or PGPASSFILE) or sqlite:PATH",
                    required: true
                )
            ]
        }
    }

    static let journalMigrate = CommandDescriptor(
        words: ["journal", "migrate"],
        storeUse: .readsJournal,
        summary: "copy the signature journal (every entry, its hash chain unchanged) into another, e.g. PostgreSQL",
        discussion: """
            Copies from the journal --journal names (default: the store's journal.sqlite) into the empty journal \
            --to names, then verifies the copy's chain and checks that both heads are equal. The source is left \
            as it is; point the workers at the new journal with --journal or CERTSIGN_JOURNAL.
            """,
        examples: ["PGPASSFILE=~/.pgpass certsign journal migrate --to postgresql://signer@db.example:5432/journal"]
    ) { (options: JournalMigrateOptions, context) in
        let destinationLocation = try JournalLocation(parsing: options.destination ?? "")
        let source = try context.openJournal()
        guard destinationLocation != source.location else {
            throw CertificateProviderError.invalidParameter("--to names the journal being copied; name another one")
        }
        let destination = try SignatureJournal(opening: destinationLocation)
        // A run that copied all or part before takes up where it stopped: only the rest is new.
        let before = try await destination.head().count
        let head = try await source.copyChain(to: destination)
        let copied = head.count - before
        let what =
            copied == 0
            ? "\(destinationLocation) is up to date with \(source.location): nothing copied"
            : "copied \(copied) \(copied == 1 ? "entry" : "entries")\(before > 0 ? " (after the \(before) there)" : "") "
                + "from \(source.location) to \(destinationLocation)"
        context.emit(
            encoding: JournalMigrateDocument(
                from: source.location.description,
                to: destinationLocation.description,
                copied: copied,
                count: head.count,
                head: head.hashHex
            ),
            human: "\(what); the chain verifies, head \(head.count):\(head.hashHex)"
        )
        return CertSign.exitSuccess
    }
}

/// `journal migrate --json`: `{"from", "to", "copied", "count", "head"}`.
struct JournalMigrateDocument: Encodable {
    var from: String
    var to: String
    /// The entries this run copied (0 when the destination was up to date).
    var copied: Int64
    var count: Int64
    var head: String

    enum CodingKeys: String, CodingKey, CaseIterable {
        case from, to, copied, count, head
    }
}
