import CertificateProviders
import Foundation
import SignatureJournal

/// `certsign journal verify`: walks the journal's hash chain.
extension Commands {
    struct JournalVerifyOptions: CommandOptions {
        var published: JournalHead?

        static var options: [OptionBinding<Self>] {
            [
                .value(
                    \.published,
                    "--published",
                    "COUNT:HASH",
                    "a head published earlier: the line 'certsign journal head' printed, or its COUNT:HASH; the entry "
                        + "at COUNT must still have that hash, and none up to COUNT may be gone",
                    convert: JournalHeadDocument.parse
                )
            ]
        }
    }

    static let journalVerify = CommandDescriptor(
        words: ["journal", "verify"],
        storeUse: .readsJournal,
        summary: "verify the signature journal's hash chain (exit 1 naming the first row changed behind its back)",
        discussion: """
            Recomputes every entry's hash from the first one (hash = SHA-256(previous hash ‖ entry)), and checks \
            the stored head and the index of current signatures against the chain. A row changed in place, a row \
            deleted or inserted before the last one, and rows added after the head fail with their row number. \
            Changes that keep the chain consistent pass unless --published names a head printed before them: the \
            last rows deleted with the head moved back, or a history rewritten with every later hash recomputed.
            """,
        examples: [
            "certsign journal verify",
            "certsign --journal postgresql://signer@db.example:5432/journal journal verify --published 1200:5f3a…",
        ]
    ) { (options: JournalVerifyOptions, context) in
        let journal = try context.openJournal()
        let head = try await journal.verify(expecting: options.published)
        context.emit(
            encoding: JournalVerifyDocument(
                valid: true,
                location: journal.location.description,
                count: head.count,
                head: head.hashHex
            ),
            human: "the journal \(journal.location) is intact: \(head.count) entries, head \(head.hashHex)"
        )
        return CertSign.exitSuccess
    }

    static let journalCommands: [CommandDescriptor] = [journalVerify, journalHead, journalMigrate]
}

/// `journal verify --json`: `{"valid": true, "location", "count", "head"}`.
struct JournalVerifyDocument: Encodable {
    var valid: Bool
    var location: String
    var count: Int64
    var head: String

    enum CodingKeys: String, CodingKey, CaseIterable {
        case valid, location, count, head
    }
}
