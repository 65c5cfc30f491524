import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What `certsign sign` leaves behind. An existing
/// signature is never replaced without `--force`; a level that cannot be met (a failing TSA) leaves
/// no file and no journal row; SIGINT / SIGTERM stop a batch cleanly and the same command with
/// `--skip-existing` finishes it. Real `certsign` processes, real files, openssl as the verifier.
@Suite("certsign sign: no silent overwrite, all or nothing, interrupts")
struct SignOutcomeTests {
    /// `--p12 FILE --password-env P` for the fixture.
    static func key(_ fixture: CLIFixture) -> [String] { ["--p12", fixture.p12Path, "--password-env", "P"] }

    /// The journal rows `certsign signatures list --json` shows: document name → ids.
    static func journal(_ fixture: CLIFixture) throws -> [String: [String]] {
        let listed = try fixture.run(["--json", "signatures", "list"])
        let rows = try #require(try CLI.json(listed)["signatures"] as? [[String: Any]], "\(listed.output)")
        var byDocument: [String: [String]] = [:]
        for row in rows {
            byDocument[row["document"] as? String ?? "", default: []].append(row["id"] as? String ?? "")
        }
        return byDocument
    }

    @Test(
        "item 1: an existing .p7s is refused before anything is signed (named, first 10 and 'and K more'); --force replaces it and its journal row"
    )
    func noSilentOverwrite() throws {
        let fixture = try CLIFixture()
        let environment = ["P": fixture.password]
        let key = Self.key(fixture)
        let document = try fixture.document("акт.txt", "акт сверки\n")
        #expect(try fixture.run(["sign", document, "--format", "cms"] + key, environment: environment).status == 0)
        let first = try Data(contentsOf: URL(fileURLWithPath: document + ".p7s"))
        let firstID = try #require(try Self.journal(fixture)["акт.txt"]?.first)

        // Again: refused, the file and the journal untouched.
        let again = try fixture.run(["--json", "sign", document] + key, environment: environment)
        #expect(again.status == 1, "\(again.output)\(again.errorOutput)")
        let error = try #require(try CLI.json(again)["error"] as? [String: Any])
        #expect(error["code"] as? String == "alreadyExists")
        let reason = error["reason"] as? String ?? ""
        #expect(reason.contains(document + ".p7s") && reason.contains("--force"), "\(reason)")
        #expect(reason.contains("nothing was signed"), "\(reason)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: document + ".p7s")) == first)
        #expect(try Self.journal(fixture)["акт.txt"] == [firstID])

        // A batch: refused as a whole before anything is signed, naming the first 10 and the rest.
        let out = fixture.directory.path("out")
        var documents: [String] = []
        for index in 0..<13 { documents.append(try fixture.document("d\(index).txt", "документ \(index)\n")) }
        #expect(
            try fixture.run(["sign"] + documents.prefix(12) + ["--out-dir", out] + key, environment: environment)
                .status == 0
        )
        let rowsBefore = try Self.journal(fixture).values.map(\.count).reduce(0, +)
        let batch = try fixture.run(["sign"] + documents + ["--out-dir", out] + key, environment: environment)
        #expect(batch.status == 1)
        #expect(batch.errorOutput.contains("12 signature files exist already"), "\(batch.errorOutput)")
        #expect(batch.errorOutput.contains("and 2 more"), "\(batch.errorOutput)")
        #expect(batch.errorOutput.contains(out + "/d0.txt.p7s"))
        #expect(!FileManager.default.fileExists(atPath: out + "/d12.txt.p7s"), "the new document was signed")
        #expect(try Self.journal(fixture).values.map(\.count).reduce(0, +) == rowsBefore)

        // --force: replaced atomically, reported, and the journal's row is the new signature's.
        let forced = try fixture.run(["--json", "sign", document, "--force"] + key, environment: environment)
        #expect(forced.status == 0, "\(forced.errorOutput)")
        let result = try #require((try CLI.json(forced)["results"] as? [[String: Any]])?.first)
        #expect(result["replaced"] as? Bool == true)
        #expect(result["format"] as? String == "cades")
        #expect(try Data(contentsOf: URL(fileURLWithPath: document + ".p7s")) != first)
        #expect(try fixture.opensslVerifies(document + ".p7s", content: document))
        #expect(try Self.journal(fixture)["акт.txt"] == [result["id"] as? String ?? "?"])
        let text = try fixture.run(["sign", document, "--force"] + key, environment: environment)
        #expect(text.output.contains("(replaced the existing file)"), "\(text.output)")
        #expect(try Self.journal(fixture)["акт.txt"]?.count == 1)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: fixture.directory.url.path)
                .filter { $0.contains(".tmp-") }.isEmpty
        )
    }

    @Test("item 1: a signed PDF output (NAME-signed.pdf, --out) is refused before signing; --force replaces it")
    func padesOutputNeedsForce() throws {
        let fixture = try CLIFixture()
        let environment = ["P": fixture.password]
        let key = Self.key(fixture)
        let source = try fixture.directory.write("source.pdf", TestPDF.minimal())
        let signed = fixture.directory.path("source-signed.pdf")
        #expect(try fixture.run(["sign", source, "--format", "pades"] + key, environment: environment).status == 0)
        let first = try Data(contentsOf: URL(fileURLWithPath: signed))
        let again = try fixture.run(["sign", source, "--format", "pades"] + key, environment: environment)
        #expect(again.status == 1)
        #expect(again.errorOutput.contains(signed) && again.errorOutput.contains("--force"), "\(again.errorOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: signed)) == first)
        let forced = try fixture.run(
            ["--json", "sign", source, "--format", "pades", "--force"] + key,
            environment: environment
        )
        #expect(forced.status == 0, "\(forced.errorOutput)")
        #expect((try CLI.json(forced)["results"] as? [[String: Any]])?.first?["replaced"] as? Bool == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: signed)) != first)
        let verified = try fixture.run(["verify", signed, "--ca", fixture.rootPath])
        #expect(verified.status == 0, "\(verified.output)")
    }

    @Test("item 1: identity import --replace is gone: a usage error that suggests --replace-identity")
    func replaceIsRenamed() throws {
        let fixture = try CLIFixture()
        let environment = ["P": fixture.password]
        let old = try fixture.run(
            ["identity", "import", fixture.p12Path, "--replace", "--password-env", "P"],
            environment: environment
        )
        #expect(old.status == 64)
        #expect(old.errorOutput.contains("--replace-identity"), "\(old.errorOutput)")
        let imported = ["identity", "import", fixture.p12Path, "--alias", "a", "--password-env", "P"]
        #expect(try fixture.run(imported, environment: environment).status == 0)
        let duplicate = try fixture.run(imported, environment: environment)
        #expect(duplicate.status == 1 && duplicate.errorOutput.contains("--replace-identity"))
        #expect(try fixture.run(imported + ["--replace-identity"], environment: environment).status == 0)
    }

    @Test("item 2: --tsa that fails leaves no .p7s and no journal row, per document, in text and JSON; exit 1")
    func failingTimestampLeavesNothing() throws {
        let fixture = try CLIFixture()
        let environment = ["P": fixture.password]
        let key = Self.key(fixture)
        let emulator = try DSSEmulator(configuration: .init(faultsEnabled: true, requestLogLimit: 0))
        try emulator.start()
        defer { emulator.stop() }
        let tsa = try #require(emulator.timestampURL).absoluteString
        let tsaCA = try fixture.directory.write("tsa-ca.pem", text: emulator.timestampAuthorityCA.pemRepresentation)
        let first = try fixture.document("first.txt", "первый\n")
        let second = try fixture.document("second.txt", "второй\n")

        // The TSA refuses (a status rejection): nothing written, nothing recorded, each document says why.
        let refused = try fixture.run(
            ["--json", "sign", first, second, "--tsa", tsa + "/reject", "--tsa-ca", tsaCA] + key,
            environment: environment
        )
        #expect(refused.status == 1)
        let results = try #require(try CLI.json(refused)["results"] as? [[String: Any]], "\(refused.output)")
        #expect(results.count == 2)
        for result in results {
            #expect(result["status"] as? String == "failed")
            #expect(result["code"] as? String == "serverRejected", "\(result)")
            #expect((result["error"] as? String ?? "").contains("no signature was written or recorded"), "\(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: first + ".p7s"))
        #expect(!FileManager.default.fileExists(atPath: second + ".p7s"))
        #expect(try Self.journal(fixture).isEmpty)

        // Nothing listens on the port: the same, in text; and to standard output nothing is written.
        let nobody = "http://127.0.0.1:1/tsa"
        let unreachable = try fixture.run(["sign", first, "--tsa", nobody] + key, environment: environment)
        #expect(unreachable.status == 1)
        #expect(unreachable.errorOutput.contains("was not signed"), "\(unreachable.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: first + ".p7s"))
        let piped = try fixture.run(["sign", first, "--out", "-", "--tsa", nobody] + key, environment: environment)
        #expect(piped.status == 1)
        #expect(piped.standardOutput.isEmpty)
        // PAdES B-T: no signed PDF either.
        let pdf = try fixture.directory.write("contract.pdf", TestPDF.minimal())
        let padesT = try fixture.run(
            ["sign", pdf, "--format", "pades", "--tsa", tsa + "/reject", "--tsa-ca", tsaCA] + key,
            environment: environment
        )
        #expect(padesT.status == 1)
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.path("contract-signed.pdf")))
        #expect(try Self.journal(fixture).isEmpty)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: fixture.directory.url.path)
                .filter { $0.contains(".tmp-") || $0.hasSuffix(".partial") }.isEmpty
        )

        // A working TSA: CAdES-T written and recorded as such.
        let good = try fixture.run(
            ["--json", "sign", first, "--tsa", tsa, "--tsa-ca", tsaCA] + key,
            environment: environment
        )
        #expect(good.status == 0, "\(good.errorOutput)")
        let made = try #require((try CLI.json(good)["results"] as? [[String: Any]])?.first)
        #expect(made["format"] as? String == "cades-t")
        #expect((made["timestamps"] as? [[String: Any]])?.count == 1)
        #expect(try fixture.opensslVerifies(first + ".p7s", content: first))
        let listed = try CLI.json(try fixture.run(["--json", "signatures", "list"]))
        #expect((listed["signatures"] as? [[String: Any]])?.map { $0["format"] as? String } == ["cades-t"])
    }

    /// Runs `certsign arguments` in the background with stdout and stderr into files.
    static func start(
        _ fixture: CLIFixture,
        _ arguments: [String],
        environment: [String: String]
    ) throws -> (
        Process, URL, URL
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        merged["CERTSIGN_HOME"] = fixture.store.url.path
        process.environment = merged
        let out = fixture.directory.url.appendingPathComponent("run-\(UUID().uuidString).out")
        let err = fixture.directory.url.appendingPathComponent("run-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, out, err)
    }

    /// Waits (at most 120 s, then kills) for a process to end.
    static func wait(_ process: Process) {
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    @Test(
        "item 5: SIGINT / SIGTERM stop a batch: exit 130 / 143, counts and the resume command on stderr, no temporary file, every .p7s recorded and valid; the resume finishes the rest",
        arguments: [SIGINT, SIGTERM]
    )
    func interruptedBatch(signal: Int32) throws {
        let fixture = try CLIFixture()
        let environment = ["P": fixture.password]
        let emulator = try DSSEmulator(configuration: .init(faultsEnabled: true, requestLogLimit: 0))
        try emulator.start()
        defer { emulator.stop() }
        // A TSA that answers after 20 ms makes each document take a moment, so the signal lands mid-batch.
        let tsa = try #require(emulator.timestampURL).absoluteString + "/slow=20"
        let tsaCA = try fixture.directory.write("tsa-ca.pem", text: emulator.timestampAuthorityCA.pemRepresentation)
        let documentsDirectory = fixture.directory.path("many")
        try FileManager.default.createDirectory(atPath: documentsDirectory, withIntermediateDirectories: true)
        var documents: [String] = []
        for index in 0..<300 {
            documents.append(try fixture.directory.write("many/n\(index).txt", text: "документ номер \(index)\n"))
        }
        let out = fixture.directory.path("out")
        let command = ["sign"] + documents + ["--out-dir", out, "--tsa", tsa, "--tsa-ca", tsaCA] + Self.key(fixture)
        let (process, _, errors) = try Self.start(fixture, command, environment: environment)
        func signatures() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).filter { $0.hasSuffix(".p7s") }
        }
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && signatures().count < 3 && Date() < deadline { usleep(5_000) }
        try #require(process.isRunning, "the batch ended before it could be interrupted")
        kill(process.processIdentifier, signal)
        Self.wait(process)
        let stderr = try String(contentsOf: errors, encoding: .utf8)
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 128 + signal, "\(stderr)")
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        #expect(stderr.contains("interrupted (\(name))"), "\(stderr)")
        #expect(stderr.contains("--skip-existing"), "\(stderr)")
        let made = signatures()
        #expect(made.count > 0 && made.count < documents.count, "\(made.count) signatures")
        #expect(stderr.contains("\(made.count) of \(documents.count) documents signed"), "\(stderr)")
        let everything = try FileManager.default.contentsOfDirectory(atPath: out)
        #expect(everything.filter { $0.contains(".tmp-") }.isEmpty, "\(everything)")
        // Every signature present has its journal row, and verifies (certsign and openssl).
        let rows = try Self.journal(fixture)
        #expect(rows.values.map(\.count).reduce(0, +) == made.count)
        for signature in made { #expect(rows[String(signature.dropLast(4))]?.count == 1, "\(signature)") }
        let verified = try fixture.run(
            ["verify"] + made.map { out + "/" + $0 } + [
                "--content-dir", documentsDirectory, "--ca", fixture.rootPath, "--tsa-ca", tsaCA,
            ]
        )
        #expect(verified.status == 0, "\(verified.output)\(verified.errorOutput)")
        let sample = try #require(made.first)
        #expect(try fixture.opensslVerifies(out + "/" + sample, content: documentsDirectory + "/" + sample.dropLast(4)))

        // The command as it was is refused (the finished outputs exist); with --skip-existing it finishes.
        let resumed = try fixture.run(command + ["--skip-existing"], environment: environment)
        #expect(resumed.status == 0, "\(resumed.errorOutput)")
        #expect(resumed.output.contains("\(made.count) skipped"), "\(resumed.output)")
        #expect(signatures().count == documents.count)
        #expect(try Self.journal(fixture).values.map(\.count).reduce(0, +) == documents.count)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.contains(".tmp-") }.isEmpty)
    }

    @Test("item 5: a rerun removes the hidden temporary files an earlier run left, whatever their age")
    func rerunRemovesFreshTemporaries() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("doc.txt", "текст\n")
        let left = fixture.directory.path(".doc.txt.p7s.tmp-" + String(repeating: "0123456789ABCDEF", count: 2))
        try Data("left by a killed run".utf8).write(to: URL(fileURLWithPath: left))
        let signed = try fixture.run(["sign", document] + Self.key(fixture), environment: ["P": fixture.password])
        #expect(signed.status == 0, "\(signed.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: left))
    }

    @Test("item 7: a symbolic link as output is refused naming it, without --out talk when no --out was given")
    func symlinkedOutputHint() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("doc.txt", "текст\n")
        let target = try fixture.directory.write("elsewhere.bin", text: "keep")
        try FileManager.default.createSymbolicLink(atPath: document + ".p7s", withDestinationPath: target)
        let refused = try fixture.run(["sign", document] + Self.key(fixture), environment: ["P": fixture.password])
        #expect(refused.status == 64)
        let message = try #require(refused.errorOutput.split(separator: "\n").first.map(String.init))
        #expect(message.contains(document + ".p7s") && message.contains("symbolic link"), "\(message)")
        #expect(!message.contains("--out "), "\(message)")
        #expect(try fixture.directory.read("elsewhere.bin") == Array("keep".utf8))
    }

    @Test("item 7: a detached signature verified without its document points to --content and --content-dir")
    func detachedWithoutContentHint() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("doc.txt", "текст\n")
        #expect(
            try fixture.run(["sign", document] + Self.key(fixture), environment: ["P": fixture.password]).status == 0
        )
        try FileManager.default.removeItem(atPath: document)
        // Without the signed data nothing can be decided: INDETERMINATE (SIGNED_DATA_NOT_FOUND), exit 2.
        let text = try fixture.run(["verify", document + ".p7s", "--ca", fixture.rootPath])
        #expect(text.status == 2)
        #expect(text.output.hasPrefix("INDETERMINATE: SIGNED_DATA_NOT_FOUND — "), "\(text.output)")
        #expect(text.output.contains("--content FILE") && text.output.contains("--content-dir"), "\(text.output)")
        let json = try fixture.run(["--json", "verify", document + ".p7s", "--ca", fixture.rootPath])
        let failure = try #require(try CLI.json(json)["failure"] as? [String: Any])
        #expect(failure["code"] as? String == "contentMissing")
        #expect((failure["hint"] as? String ?? "").contains("--content"), "\(failure)")
    }

    @Test("item 11: the multi-file progress bar counts documents; help lists the --format alias cades-bes")
    func progressCountsDocumentsAndHelpListsAlias() throws {
        try #require(ExternalTool.isAvailable("script"), "util-linux 'script' is not installed")
        let fixture = try CLIFixture()
        var documents: [String] = []
        for index in 0..<5 { documents.append(try fixture.document("p\(index).txt", "страница \(index)\n")) }
        let passwordFile = try fixture.directory.write("pw", text: fixture.password)
        let onTerminal = try CLI.runOnTerminal(
            ["sign"] + documents + ["--p12", fixture.p12Path, "--password-file", passwordFile],
            store: fixture.store
        )
        #expect(onTerminal.succeeded, "\(onTerminal.output)")
        #expect(onTerminal.output.contains("5/5 documents"), "\(onTerminal.output)")
        #expect(!onTerminal.output.contains(" B/5 B"), "\(onTerminal.output)")

        let help = try fixture.run(["help", "sign"])
        #expect(help.status == 0)
        #expect(help.output.contains("cades-bes"), "\(help.output)")
        #expect(
            try fixture.run(
                ["sign", documents[0], "--format", "cades-bes", "--force"] + Self.key(fixture),
                environment: ["P": fixture.password]
            ).status == 0
        )
    }
}

/// Ctrl-C while `sign` still opens its key (here: a login the server never answers) says that
/// nothing was signed, and `--skip-existing` prints a count (the names only with `--verbose`).
@Suite(.enabled(if: CLI.isBuilt, "the certsign binary is not built"))
struct SignSummaryTests {
    @Test("SIGINT before anything is signed: exit 130 and '0 of 2 documents signed; nothing written'")
    func interruptedBeforeSigning() throws {
        let fixture = try CLIFixture()
        let server = try LoopbackListener()
        let documents = [try fixture.document("a.txt", "a\n"), try fixture.document("b.txt", "b\n")]
        let command =
            ["sign"] + documents + [
                "--provider", "cryptopro-dss", "--param", "url=http://127.0.0.1:\(server.port)/",
                "--param", "username=u", "--param-env", "password=P", "--param", "certificateID=1", "--param-env",
                "pin=P",
            ]
        let (process, _, errors) = try SignOutcomeTests.start(fixture, command, environment: ["P": "p"])
        // The login is under way once its connection waits at the server.
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && !server.hasPendingConnection() && Date() < deadline { usleep(5_000) }
        try #require(process.isRunning && server.hasPendingConnection(), "sign never reached the server")
        kill(process.processIdentifier, SIGINT)
        SignOutcomeTests.wait(process)
        let stderr = try String(contentsOf: errors, encoding: .utf8)
        #expect(process.terminationReason == .exit && process.terminationStatus == 130, "\(stderr)")
        #expect(stderr.contains("interrupted (SIGINT): 0 of 2 documents signed; nothing written"), "\(stderr)")
        #expect(!documents.contains { FileManager.default.fileExists(atPath: $0 + ".p7s") })
    }

    @Test("--skip-existing prints how many it skipped; --verbose names them")
    func skipExistingCounts() throws {
        let fixture = try CLIFixture()
        let documents = try (0..<4).map { try fixture.document("d\($0).txt", "d\($0)\n") }
        try fixture.signWithP12(documents[0], Array(documents[1...2]))
        let resumed = try fixture.signWithP12(documents[0], Array(documents[1...]) + ["--skip-existing"])
        #expect(!resumed.output.split(separator: "\n").contains { $0.hasPrefix("skipped ") }, "\(resumed.output)")
        #expect(resumed.output.contains("1 of 1 documents signed, 3 skipped"), "\(resumed.output)")
        let verbose = try fixture.signWithP12(documents[0], Array(documents[1...]) + ["--skip-existing", "--verbose"])
        #expect(
            verbose.output.split(separator: "\n").filter { $0.hasPrefix("skipped ") }.count == 4,
            "\(verbose.output)"
        )
    }
}
