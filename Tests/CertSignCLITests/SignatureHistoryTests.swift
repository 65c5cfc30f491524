import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// `signatures list` asks a server for its history only when the store keeps a session with it; a
/// server that stopped answering is one line naming `--local`, which asks none.
@Suite(.enabled(if: CLI.isBuilt, "the certsign binary is not built"))
struct SignatureHistoryTests {
    @Test("a session whose server is down: one line naming --local; --local is silent; journal rows still listed")
    func serverDownIsOneLine() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("a.txt", "a\n")
        try fixture.signWithP12(document)
        let emulator = try DSSEmulator(seed: sharedSeed)
        let url = try emulator.start()
        try CLI.dssLogin(url, store: fixture.store)
        let up = try fixture.run(["signatures", "list"])
        #expect(up.status == 0 && up.errorOutput.isEmpty, "\(up.errorOutput)")
        emulator.stop()

        let down = try fixture.run(["signatures", "list"])
        #expect(down.status == 0, "\(down.errorOutput)")
        let lines = down.errorOutput.split(separator: "\n")
        #expect(lines.count == 1, "\(down.errorOutput)")
        #expect(
            down.errorOutput.contains("does not answer") && down.errorOutput.contains("--local"),
            "\(down.errorOutput)"
        )
        #expect(down.output.contains("a.txt"), "\(down.output)")
        let local = try fixture.run(["signatures", "list", "--local"])
        #expect(local.status == 0 && local.errorOutput.isEmpty, "\(local.errorOutput)")
        #expect(local.output.contains("a.txt"), "\(local.output)")
    }

    @Test(
        "with a PostgreSQL journal: nothing said before any login; a stopped server is one line naming --local",
        .enabled(if: PostgresCluster.binaryDirectory != nil, "PostgreSQL is not installed")
    )
    func postgresJournalAlike() throws {
        let fixture = try CLIFixture()
        let cluster = try PostgresCluster()
        let journal = ["--journal", cluster.uri()]
        let never = try fixture.run(journal + ["signatures", "list"], environment: cluster.environment)
        #expect(never.status == 0 && never.errorOutput.isEmpty, "\(never.errorOutput)")
        let emulator = try DSSEmulator(seed: sharedSeed)
        try CLI.dssLogin(try emulator.start(), store: fixture.store)
        emulator.stop()
        let down = try fixture.run(journal + ["signatures", "list"], environment: cluster.environment)
        #expect(down.status == 0, "\(down.errorOutput)")
        #expect(down.errorOutput.split(separator: "\n").count == 1, "\(down.errorOutput)")
        #expect(down.errorOutput.contains("--local"), "\(down.errorOutput)")
    }

    @Test("certsign demo lists its signatures without a word about a server")
    func demoSaysNothingAboutServers() throws {
        let store = try TemporaryDirectory()
        let demo = try CLI.run(["demo"], store: store)
        #expect(demo.status == 0, "\(demo.errorOutput)")
        let said = demo.output + demo.errorOutput
        for phrase in ["does not answer", "unavailable", "not logged in", "warning"] {
            #expect(!said.contains(phrase), "\(phrase): \(said)")
        }
    }
}
