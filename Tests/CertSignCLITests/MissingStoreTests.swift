import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `--store DIR` naming a directory that does not exist (a typo) is an error for a command that reads
/// the store, naming the path, and nothing is created; a command that makes a store still does.
@Suite(.enabled(if: CLI.isBuilt, "the certsign binary is not built"))
struct MissingStoreTests {
    @Test("identity list, journal head, signatures list, sessions list on a missing --store: exit 1 naming it")
    func readingCommandsRefuseAMissingStore() throws {
        let fixture = try CLIFixture()
        let typo = fixture.directory.path("sigining")
        for command in [["identity", "list"], ["journal", "head"], ["signatures", "list"], ["sessions", "list"]] {
            let result = try fixture.run(["--store", typo] + command)
            #expect(result.status == 1, "\(command): \(result.output) \(result.errorOutput)")
            #expect(result.errorOutput.contains("the store \(typo) (--store) does not exist"), "\(result.errorOutput)")
            #expect(result.errorOutput.contains("hint: check the --store path"), "\(result.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: typo), "\(command) created \(typo)")
        }
        let json = try fixture.run(["--json", "--store", typo, "identity", "list"])
        #expect(try (CLI.json(json)["error"] as? [String: Any])?["code"] as? String == "notStored")
        // identity import makes the store; then identity list reads it.
        let imported = try fixture.run(
            ["--store", typo, "identity", "import", fixture.p12Path, "--alias", "a", "--password-stdin"],
            input: fixture.password
        )
        #expect(imported.status == 0, "\(imported.errorOutput)")
        let listed = try fixture.run(["--store", typo, "identity", "list"])
        #expect(listed.status == 0 && listed.output.contains("a"), "\(listed.errorOutput)")
        // With a journal of its own, journal head needs no store.
        let journal = fixture.directory.path("elsewhere.sqlite")
        let head = try fixture.run([
            "--store", fixture.directory.path("none"), "--journal", "sqlite:" + journal, "journal", "head",
        ])
        #expect(head.status == 0, "\(head.errorOutput)")
    }
}
