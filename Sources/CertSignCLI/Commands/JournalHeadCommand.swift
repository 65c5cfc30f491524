import CertificateProviders
import Foundation
import SignatureJournal

/// `certsign journal head`: the chain's head, to publish.
extension Commands {
    static let journalHead = CommandDescriptor(
        words: ["journal", "head"],
        storeUse: .readsJournal,
        summary: "print the line to publish: the journal's head (COUNT:HASH), the journal and the time",
        discussion: """
            Prints one line, COUNT:HASH JOURNAL TIME. Publish it somewhere the journal's writers cannot change \
            (a transparency log, a signed mail, a ticket); later, 'certsign journal verify --published LINE' \
            (the line, or its COUNT:HASH) proves the history up to it did not change and no entry up to COUNT \
            was deleted. Without a published head, 'journal verify' cannot see the last entries deleted together \
            with the head, nor a history rewritten with every later hash recomputed.
            """,
        examples: ["certsign journal head", "certsign --json journal head"]
    ) { context in
        let journal = try context.openJournal()
        let head = try await journal.head()
        context.emit(
            encoding: JournalHeadDocument(
                location: journal.location.description,
                count: head.count,
                head: head.hashHex
            ),
            human: "\(head.count):\(head.hashHex)  \(journal.location)  \(Format.isoDate(Date()))"
        )
        return CertSign.exitSuccess
    }
}

/// `journal head --json`: `{"location", "count", "head"}`.
struct JournalHeadDocument: Encodable {
    var location: String
    var count: Int64
    var head: String

    enum CodingKeys: String, CodingKey, CaseIterable {
        case location, count, head
    }

    /// Parses `COUNT:HASH` (64 hex digits), alone or as the first field of the line `journal head`
    /// prints (`COUNT:HASH JOURNAL TIME`, as it was published).
    static func parse(_ text: String) throws -> JournalHead? {
        let field = text.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
        let parts = field.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = Int64(parts[0]), count >= 0, parts[1].count == 64 else {
            throw InvalidValue(message: "expected COUNT:HASH as 'certsign journal head' prints it (64 hex digits)")
        }
        var bytes: [UInt8] = []
        var digits = parts[1].makeIterator()
        while let high = digits.next(), let low = digits.next() {
            guard let byte = UInt8(String([high, low]), radix: 16) else {
                throw InvalidValue(message: "the hash of COUNT:HASH must be 64 hex digits")
            }
            bytes.append(byte)
        }
        return JournalHead(count: count, hash: bytes)
    }
}
