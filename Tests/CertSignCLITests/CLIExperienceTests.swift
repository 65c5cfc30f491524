import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// The CLI as a new user meets it: help, suggestions, hints that point at the right
/// command, `--json` failures, one path form, one DN form, id prefixes, password files.
@Suite struct CLIExperienceTests {
    @Test func groupHelpHasAUsageLine() throws {
        for group in ["identity", "dss", "signatures", "csc"] {
            let help = try CLI.run([group, "--help"])
            #expect(help.status == 0)
            #expect(help.output.hasPrefix("usage: certsign \(group) <subcommand> [options]"), "\(help.output)")
            #expect(help.output.contains("subcommands:"))
        }
        let bare = try CLI.run(["identity"])
        #expect(bare.status == 64)
        #expect(bare.errorOutput.contains("usage: certsign identity <subcommand>"))
    }

    @Test func unknownCommandsAndOptionsGetASuggestion() throws {
        let command = try CLI.run(["sgin", "file.txt"])
        #expect(command.status == 64)
        #expect(command.errorOutput.contains("unknown command 'sgin' (did you mean 'sign'?)"), "\(command.errorOutput)")
        let subcommand = try CLI.run(["identity", "lst"])
        #expect(subcommand.status == 64)
        #expect(subcommand.errorOutput.contains("did you mean 'list'?"), "\(subcommand.errorOutput)")
        let option = try CLI.run(["verify", "x.p7s", "--no-chain-chek"])
        #expect(option.status == 64)
        #expect(option.errorOutput.contains("did you mean '--no-chain-check'?"), "\(option.errorOutput)")
    }

    @Test func anUnknownGlobalOptionIsCalledAnOption() throws {
        let result = try CLI.run(["--verbose"])
        #expect(result.status == 64)
        #expect(result.errorOutput.contains("unknown option --verbose"), "\(result.errorOutput)")
        #expect(!result.errorOutput.contains("unknown command"))
    }

    @Test func helpCommandExplainsACommandOrAGroup() throws {
        let viaHelp = try CLI.run(["help", "sign"])
        let viaFlag = try CLI.run(["sign", "--help"])
        #expect(viaHelp.status == 0 && viaFlag.status == 0)
        #expect(viaHelp.output == viaFlag.output)
        #expect(viaHelp.output.hasPrefix("usage: certsign sign DOCUMENT..."))
        #expect(viaHelp.output.contains("--out-dir DIR"))
        let group = try CLI.run(["help", "identity"])
        #expect(group.status == 0 && group.output.contains("usage: certsign identity <subcommand>"))
        let sub = try CLI.run(["help", "identity", "export"])
        #expect(sub.output.hasPrefix("usage: certsign identity export ALIAS --out FILE"))
        let overview = try CLI.run(["help"])
        #expect(overview.status == 0 && overview.output.contains("commands:"))
        let provider = try CLI.run(["sign", "--help", "--provider", "csc"])
        #expect(provider.status == 0)
        #expect(provider.output.contains("parameters of csc"), "\(provider.output)")
        #expect(provider.output.contains("clientSecret"))
        let unknown = try CLI.run(["help", "sgin"])
        #expect(unknown.status == 64 && unknown.errorOutput.contains("did you mean 'sign'?"))
    }

    /// Every failure under `--json` prints one `{"error": {"code", "reason", "hint"}}` document on stdout.
    @Test func jsonFailuresPrintAnErrorDocumentForEveryCommand() throws {
        let store = try TemporaryDirectory()
        let work = try TemporaryDirectory()
        let missing = work.path("missing.bin")
        let existing = try work.write("exists.p12", text: "x")
        let failures: [[String]] = [
            ["providers", "extra"],
            ["identity", "import", missing],
            ["identity", "list", "--bogus"],
            ["identity", "show", "nobody"],
            ["identity", "delete", "nobody"],
            ["identity", "export", "nobody", "--out", existing],
            ["sign", missing, "--identity", "nobody"],
            ["verify", missing, "--no-chain-check"],
            ["timestamp", missing, "--tsa", "ftp://127.0.0.1:9/"],
            ["signatures", "list", "--bogus"],
            ["signatures", "remove", "0F1C"],
            ["dss", "signs"],
            ["dss", "certificates"],
            ["dss", "sign", "--resource", "R"],
            ["dss", "login", "--host", "ftp://x"],
            ["dss", "remove", "not-a-number"],
            ["emulator", "--host", "192.0.2.1"],
            ["tokens", "--module", missing],
            ["csc", "credentials"],
            ["demo", "--bogus"],
            ["sgin"],
        ]
        for arguments in failures {
            let result = try CLI.run(["--json"] + arguments, store: store)
            #expect(result.status != 0, "\(arguments) succeeded")
            let json = try CLI.json(result)
            let error = try #require(json["error"] as? [String: Any], "\(arguments): \(result.output)")
            #expect((error["code"] as? String)?.isEmpty == false, "\(arguments)")
            #expect((error["reason"] as? String)?.isEmpty == false, "\(arguments)")
            #expect(Set(error.keys).isSubset(of: ["code", "reason", "hint"]), "\(arguments): \(error.keys)")
            #expect(result.status != 64 || error["code"] as? String == "usage", "\(arguments)")
        }
        // sign and timestamp report a document that fails among the others in their results.
        let perDocument = try CLI.run(["--json", "timestamp", missing, "--tsa", "http://127.0.0.1:9/"], store: store)
        #expect(perDocument.status == 1)
        let results = try #require(try CLI.json(perDocument)["results"] as? [[String: Any]])
        #expect(results.first?["code"] as? String == "fileSystem")
    }

    @Test func hintsPointAtTheRightCommand() throws {
        let fixture = try CLIFixture()
        // A bad signature id: the signature list, not the identity list.
        let badID = try fixture.run(["signatures", "remove", "0F1C"])
        #expect(badID.status == 1)
        #expect(badID.errorOutput.contains("certsign signatures list"), "\(badID.errorOutput)")
        #expect(!badID.errorOutput.contains("identity list"))
        // Not logged in to the platform: log in.
        let notLoggedIn = try fixture.run(["dss", "signs"])
        #expect(notLoggedIn.status == 1)
        #expect(notLoggedIn.errorOutput.contains("dss login"), "\(notLoggedIn.errorOutput)")
        #expect(!notLoggedIn.errorOutput.contains("identity list"))

        // Duplicate alias: --replace-identity. Export over an existing file: --out, not --alias.
        let environment = ["P12_PASSWORD": fixture.password]
        let importArguments = [
            "identity", "import", fixture.p12Path, "--alias", "dup", "--password-env", "P12_PASSWORD",
        ]
        #expect(try fixture.run(importArguments, environment: environment).status == 0)
        let duplicate = try fixture.run(importArguments, environment: environment)
        #expect(duplicate.status == 1)
        #expect(duplicate.errorOutput.contains("--replace-identity"), "\(duplicate.errorOutput)")
        let taken = try fixture.document("taken.p12", "not mine")
        let export = try fixture.run(
            ["identity", "export", "dup", "--out", taken, "--password-env", "P12_PASSWORD"],
            environment: environment
        )
        #expect(export.status == 1)
        #expect(export.errorOutput.contains("--out"), "\(export.errorOutput)")
        #expect(!export.errorOutput.contains("--alias"))

        // An empty store password names the store-password options.
        let empty = try fixture.run(
            [
                "identity", "import", fixture.p12Path, "--alias", "other", "--password-env", "P12_PASSWORD",
                "--store-password-env", "EMPTY",
            ],
            environment: environment.merging(["EMPTY": ""]) { $1 }
        )
        #expect(empty.status == 1)
        #expect(empty.errorOutput.contains("--store-password-env"), "\(empty.errorOutput)")
    }

    @Test func hintsForTheServerAndTheEmulator() throws {
        let emulator = try DSSEmulator()
        let url = try emulator.start()
        defer { emulator.stop() }
        // A busy local port: choose another port, not "check that the server is reachable".
        let busy = try CLI.run(["emulator", "--port", String(url.port ?? 0)])
        #expect(busy.status == 1)
        #expect(busy.errorOutput.contains("--port"), "\(busy.errorOutput)")
        #expect(!busy.errorOutput.contains("reachable"))

        let store = try TemporaryDirectory()
        try CLI.dssLogin(url, store: store)
        let remove = try CLI.run(["dss", "remove", "999"], store: store)
        #expect(remove.status == 1)
        #expect(remove.errorOutput.contains("certsign dss signs"), "\(remove.errorOutput)")
        #expect(!remove.errorOutput.contains("identity list"))
    }

    /// `sign` and `verify` print paths in one form (absolute), however they were given.
    @Test func signAndVerifyPrintOnePathForm() throws {
        let fixture = try CLIFixture()
        _ = try fixture.document("relative.txt", "text\n")
        let signed = try CLI.run(
            ["--json", "sign", "relative.txt", "--p12", fixture.p12Path, "--password-env", "P"],
            store: fixture.store,
            environment: ["P": fixture.password],
            directory: fixture.directory.url
        )
        #expect(signed.status == 0, "\(signed.errorOutput)")
        let result = try #require((try CLI.json(signed)["results"] as? [[String: Any]])?.first)
        let expected = fixture.directory.url.appendingPathComponent("relative.txt.p7s").standardizedFileURL.path
        #expect(result["signature"] as? String == expected)
        #expect(result["document"] as? String == String(expected.dropLast(4)))
        let verified = try CLI.run(
            ["--json", "verify", "relative.txt.p7s", "--ca", fixture.rootPath],
            store: fixture.store,
            directory: fixture.directory.url
        )
        #expect(verified.status == 0, "\(verified.errorOutput)")
        let json = try CLI.json(verified)
        #expect(json["signature"] as? String == expected)
        #expect(json["content"] as? String == String(expected.dropLast(4)))
    }

    /// Subjects print as RFC 4514 (openssl's -nameopt RFC2253) in text and JSON.
    @Test func distinguishedNamesAreRFC4514Everywhere() throws {
        let fixture = try CLIFixture()
        let certificate = try fixture.directory.write("signer.pem", text: fixture.signer.certificate.pemRepresentation)
        let openssl = try ExternalTool.run(
            "openssl",
            ["x509", "-in", certificate, "-noout", "-subject", "-nameopt", "RFC2253,-esc_msb"]
        )
        try #require(openssl.succeeded)
        let expected = openssl.output.trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "subject=", with: "")
        #expect(expected.hasPrefix("CN="), "\(expected)")
        let environment = ["P": fixture.password]
        #expect(
            try fixture.run(
                ["identity", "import", fixture.p12Path, "--alias", "dn", "--password-env", "P"],
                environment: environment
            ).status == 0
        )
        let shown = try CLI.json(try fixture.run(["--json", "identity", "show", "dn"]))
        #expect((shown["identity"] as? [String: Any])?["subject"] as? String == expected)
        let text = try fixture.run(["identity", "show", "dn"])
        #expect(text.output.contains("subject:      \(expected)\n"))
        let document = try fixture.document("dn.txt", "dn\n")
        #expect(
            try fixture.run(["sign", document, "--identity", "dn", "--password-env", "P"], environment: environment)
                .status == 0
        )
        let verified = try CLI.json(try fixture.run(["--json", "verify", document + ".p7s", "--ca", fixture.rootPath]))
        #expect((verified["signer"] as? [String: Any])?["subject"] as? String == expected)
    }

    /// `signatures remove` takes a unique id prefix; an ambiguous one is a usage error listing the matches.
    @Test func signaturesRemoveAcceptsAUniquePrefix() throws {
        let fixture = try CLIFixture()
        // 17 signatures: two ids must share their first hex digit.
        let documents = try (1...17).map { try fixture.document("doc-\($0).txt", "document \($0)\n") }
        let signed = try fixture.run(
            ["sign"] + documents + ["--p12", fixture.p12Path, "--password-env", "P"],
            environment: ["P": fixture.password]
        )
        #expect(signed.status == 0, "\(signed.errorOutput)")
        let list = try CLI.json(try fixture.run(["--json", "signatures", "list"]))
        let ids = try #require(list["signatures"] as? [[String: Any]]).compactMap { $0["id"] as? String }
        #expect(ids.count == 17)
        let byFirst = Dictionary(grouping: ids) { String($0.prefix(1)) }
        let shared = try #require(byFirst.first { $0.value.count > 1 })
        let ambiguous = try fixture.run(["signatures", "remove", shared.key.lowercased()])
        #expect(ambiguous.status == 64, "\(ambiguous.errorOutput)")
        for id in shared.value { #expect(ambiguous.errorOutput.contains(id)) }

        let target = ids[0]
        let prefix = try #require(
            (4...target.count).lazy.map { String(target.prefix($0)) }.first { p in
                ids.filter { $0.hasPrefix(p) }.count == 1
            }
        )
        let removed = try CLI.json(try fixture.run(["--json", "signatures", "remove", prefix]))
        #expect((removed["removed"] as? [String: Any])?["id"] as? String == target)
        let after = try CLI.json(try fixture.run(["--json", "signatures", "list"]))
        #expect((after["signatures"] as? [[String: Any]])?.contains { $0["id"] as? String == target } == false)
    }

    /// A password file holds the password on its first line, for every --…-file option.
    @Test func passwordFilesHoldTheSecretOnTheirFirstLine() throws {
        let fixture = try CLIFixture()
        let file = try fixture.directory.write("password.txt", text: fixture.password + "\nthe P12 password, line 2\n")
        let imported = try fixture.run([
            "identity", "import", fixture.p12Path, "--alias", "pf", "--password-file", file,
        ])
        #expect(imported.status == 0, "\(imported.errorOutput)")
        let document = try fixture.document("pf.txt", "pf\n")
        let signed = try fixture.run(["sign", document, "--identity", "pf", "--password-file", file])
        #expect(signed.status == 0, "\(signed.errorOutput)")
        let crlf = try fixture.directory.write("crlf.txt", text: fixture.password + "\r\n")
        let viaCRLF = try fixture.run([
            "sign", document, "--out", document + ".2.p7s", "--p12", fixture.p12Path, "--password-file", crlf,
        ])
        #expect(viaCRLF.status == 0, "\(viaCRLF.errorOutput)")
    }
}
