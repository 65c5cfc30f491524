import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `journal head` prints the line to publish, and `journal verify --published LINE` takes it back: a
/// tail deletion with the head row set back passes `journal verify` alone (the chain is consistent,
/// as docs/SCALING.md says) and fails against the published line.
@Suite(.enabled(if: CLI.isBuilt, "the certsign binary is not built"))
struct JournalHeadPublishingTests {
    @Test("journal head: 'COUNT:HASH JOURNAL TIME'; a tail deletion with the head fixed up is found only with it")
    func publishedLineFindsTailDeletion() throws {
        let fixture = try CLIFixture()
        let documents = try (0..<3).map { try fixture.document("d\($0).txt", "d\($0)\n") }
        try fixture.signWithP12(documents[0], Array(documents[1...]))
        let head = try fixture.run(["journal", "head"])
        #expect(head.status == 0, "\(head.errorOutput)")
        let line = head.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let fields = line.split(whereSeparator: \.isWhitespace).map(String.init)
        let journal = fixture.store.path("journal.sqlite")
        #expect(fields.count == 3, "\(line)")
        #expect(fields.first?.hasPrefix("3:") == true && fields.first?.count == 2 + 64, "\(line)")
        #expect(fields.dropFirst().first == "sqlite:" + journal, "\(line)")
        #expect(fields.last.flatMap { try? Date($0, strategy: .iso8601) } != nil, "\(line)")
        let intact = try fixture.run(["journal", "verify", "--published", line])
        #expect(intact.status == 0, "\(intact.errorOutput)")

        // The last entry deleted, the index and the head row set back to the entry before it.
        let tamper = try ExternalTool.run(
            "sqlite3",
            [
                journal,
                """
                DELETE FROM journal_current WHERE seq = (SELECT max(seq) FROM journal_entries);
                DELETE FROM journal_entries WHERE seq = (SELECT max(seq) FROM journal_entries);
                UPDATE journal_head SET count = (SELECT max(seq) FROM journal_entries),
                    hash = (SELECT hash FROM journal_entries ORDER BY seq DESC LIMIT 1);
                """,
            ]
        )
        #expect(tamper.succeeded, "\(tamper.errorOutput)")
        let alone = try fixture.run(["journal", "verify"])
        #expect(alone.status == 0, "the consistent shorter chain passes without a published head: \(alone.errorOutput)")
        let published = try fixture.run(["journal", "verify", "--published", line])
        #expect(published.status == 1)
        #expect(published.errorOutput.contains("rows 3…3 were deleted"), "\(published.errorOutput)")
    }
}
