import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// Names a user or a server chose reach text output escaped: a file whose name holds a newline cannot
/// forge a line of `sign`'s or `signatures list`'s output, nor an escape sequence reach the terminal;
/// `--json` keeps the name as it is (its encoder escapes it).
@Suite(.enabled(if: CLI.isBuilt, "the certsign binary is not built"))
struct OutputEscapingTests {
    static let forgedName = "a.txt\nsigned evil.txt -> evil.txt.p7s\u{1B}[2J"

    @Test("a newline and an ESC in a document's name: one line each in sign and signatures list, escaped")
    func controlCharactersAreEscaped() throws {
        let fixture = try CLIFixture()
        let forged = try fixture.document(Self.forgedName, "forged\n")
        let plain = try fixture.document("plain.txt", "plain\n")
        let signed = try fixture.signWithP12(forged, [plain])
        let lines = signed.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("signed evil") }, "\(lines)")
        #expect(!signed.output.contains("\u{1B}"), "\(signed.output.debugDescription)")
        #expect(signed.output.contains(#"a.txt\nsigned evil.txt -> evil.txt.p7s\x1B[2J"#), "\(signed.output)")

        let list = try fixture.run(["signatures", "list"])
        #expect(list.status == 0, "\(list.errorOutput)")
        let rows = list.output.split(separator: "\n")
        #expect(rows.count == 3, "a header and two signatures: \(rows)")
        #expect(!list.output.contains("\u{1B}") && !rows.contains { $0.hasPrefix("signed ") }, "\(list.output)")

        // JSON carries the name unchanged.
        let json = try fixture.run(["--json", "signatures", "list"])
        let entries = try #require(try CLI.json(json)["signatures"] as? [[String: Any]])
        #expect(entries.contains { ($0["document"] as? String)?.hasSuffix(Self.forgedName) == true }, "\(json.output)")

        // Errors name the file escaped too.
        let missing = try fixture.run(
            [
                "sign", fixture.directory.path("gone\nVALID: x"), "--p12", fixture.p12Path,
                "--password-env", "P12PASS",
            ],
            environment: ["P12PASS": fixture.password]
        )
        #expect(missing.status != 0)
        #expect(
            !missing.errorOutput.split(separator: "\n").contains { $0.hasPrefix("VALID") },
            "\(missing.errorOutput)"
        )
    }
}
