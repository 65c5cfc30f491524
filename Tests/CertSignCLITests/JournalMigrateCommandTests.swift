import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `journal migrate --to URL` says what it copied: every entry the first time, nothing ("up to date")
/// when run again, only the new entries after more signing.
@Suite(.enabled(if: CLI.isBuilt, "the certsign binary is not built"))
struct JournalMigrateCommandTests {
    @Test("migrate twice: 'copied 2 entries', then 'up to date: nothing copied'; after one more signature, 1")
    func secondRunIsUpToDate() throws {
        let fixture = try CLIFixture()
        let documents = try (0..<3).map { try fixture.document("d\($0).txt", "d\($0)\n") }
        try fixture.signWithP12(documents[0], [documents[1]])
        let destination = "sqlite:" + fixture.directory.path("copy.sqlite")
        let first = try fixture.run(["journal", "migrate", "--to", destination])
        #expect(first.status == 0, "\(first.errorOutput)")
        #expect(first.output.hasPrefix("copied 2 entries from "), "\(first.output)")

        let second = try fixture.run(["journal", "migrate", "--to", destination])
        #expect(second.status == 0, "\(second.errorOutput)")
        #expect(second.output.contains("is up to date with"), "\(second.output)")
        #expect(second.output.contains("nothing copied"), "\(second.output)")
        #expect(!second.output.contains("copied 2"), "\(second.output)")
        let json = try CLI.json(try fixture.run(["--json", "journal", "migrate", "--to", destination]))
        #expect(json["copied"] as? Int == 0 && json["count"] as? Int == 2, "\(json)")

        try fixture.signWithP12(documents[2])
        let third = try fixture.run(["journal", "migrate", "--to", destination])
        #expect(third.output.hasPrefix("copied 1 entry (after the 2 there) from "), "\(third.output)")
    }
}
