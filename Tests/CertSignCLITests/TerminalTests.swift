import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// What certsign draws when it runs on a terminal: `script` (util-linux) gives it a real
/// pseudo-terminal, the way a person's shell does.
@Suite struct TerminalTests {
    @Test func progressBarOnATerminalOnlyAndPromptWithoutEcho() throws {
        try #require(ExternalTool.isAvailable("script"), "util-linux 'script' is not installed")
        let fixture = try CLIFixture()
        #expect(try fixture.importIdentity(alias: "tty"))
        // A 17 MiB document is over the 16 MiB progress threshold.
        let big = fixture.directory.path("big.bin")
        try Data(count: 17 << 20).write(to: URL(fileURLWithPath: big))
        let passwordFile = try fixture.directory.write("pw", text: fixture.password)
        let onTerminal = try CLI.runOnTerminal(
            ["sign", big, "--identity", "tty", "--password-file", passwordFile],
            store: fixture.store
        )
        #expect(onTerminal.succeeded, "\(onTerminal.output)")
        #expect(onTerminal.output.contains("signing ["), "no progress bar on a terminal: \(onTerminal.output)")
        #expect(onTerminal.output.contains("100%"))
        // Not a terminal: no progress bar, nothing extra on stderr.
        let piped = try fixture.run([
            "sign", big, "--identity", "tty", "--password-file", passwordFile, "--out", big + ".2.p7s",
        ])
        #expect(piped.status == 0)
        #expect(piped.errorOutput.isEmpty, "stderr: \(piped.errorOutput)")

        // The password prompt appears on the terminal and the typed password is not echoed. Python's
        // pty module plays the person: it waits for the prompt, then types.
        let typed = try CLI.typeOnTerminal(
            ["identity", "import", fixture.p12Path, "--alias", "prompted"],
            after: "password:",
            typing: fixture.password,
            store: fixture.store
        )
        #expect(typed.succeeded, "\(typed.output) \(typed.errorOutput)")
        #expect(typed.output.contains("PKCS#12 password:"))
        #expect(!typed.output.contains(fixture.password), "the password was echoed")
        #expect(typed.output.contains("imported 'prompted'"))
    }

    /// `identity delete` on a terminal shows what it would delete and asks; "n" keeps the identity,
    /// "y" deletes it; `--yes` and scripts (no terminal) are not asked.
    @Test func identityDeleteAsksOnATerminal() throws {
        let fixture = try CLIFixture()
        #expect(try fixture.importIdentity(alias: "keep"))
        func delete(answer: String) throws -> ExternalTool.Result {
            try CLI.typeOnTerminal(
                ["identity", "delete", "keep"],
                after: "[y/N]",
                typing: answer,
                store: fixture.store
            )
        }
        let declined = try delete(answer: "n")
        #expect(declined.status == 1, "\(declined.output)")
        #expect(declined.output.contains("delete 'keep' (") && declined.output.contains("nothing deleted"))
        #expect(try fixture.run(["identity", "show", "keep"]).status == 0)
        let accepted = try delete(answer: "y")
        #expect(accepted.status == 0, "\(accepted.output)")
        #expect(accepted.output.contains("deleted 'keep'"))
        #expect(try fixture.run(["identity", "show", "keep"]).status == 1)
    }
}
