import CertificateProviders
import Foundation
import SignatureJournal

/// `certsign journal head`: the chain's head, to publish.
extension Commands {
    static let journalHead = CommandDescriptor(
        words: ["journal", "head"],
        storeUse: .readsJournal,
        summary: "print the signature journal's head: entry count and last hash (a checkpoint to publish)",
        discussion: """
            Publish the head (COUNT:HASH) somewhere the journal's writers cannot change; later, \
            'certsign journal verify --published COUNT:HASH' proves the history up to it did not change.
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
            human: "\(head.count):\(head.hashHex)"
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

    /// Parses `COUNT:HASH` (64 hex digits), as `journal head` prints it.
    static func parse(_ text: String) throws -> JournalHead? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
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
