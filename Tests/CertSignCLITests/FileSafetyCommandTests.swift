import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import TestSupport
import Testing

/// The CLI's files and secrets: real `certsign` processes on real files.
@Suite struct FileSafetyCommandTests {
    /// A `.p12` without a password, made by `openssl pkcs12 -export -passout pass:`.
    static func passwordlessP12(_ fixture: CLIFixture) throws -> String {
        let key = try fixture.directory.write(
            "nopass.key",
            text: try (fixture.signer.key as! LocalSigningKey).pemRepresentation(password: nil)
        )
        let certificate = try fixture.directory.write("nopass.pem", text: fixture.signer.certificate.pemRepresentation)
        let path = fixture.directory.path("nopass.p12")
        let made = try ExternalTool.run(
            "openssl",
            ["pkcs12", "-export", "-inkey", key, "-in", certificate, "-out", path, "-passout", "pass:"]
        )
        try #require(made.succeeded, "\(made.errorOutput)")
        return path
    }

    @Test("item 7: sign --p12 opens a password-less file in memory: nothing stored, no temporary copy")
    func p12InMemory() throws {
        let fixture = try CLIFixture()
        let p12 = try Self.passwordlessP12(fixture)
        let document = try fixture.document("план.txt", "план\n")
        let temporary = try TemporaryDirectory()
        let signed = try fixture.run(["sign", document, "--p12", p12], environment: ["TMPDIR": temporary.url.path])
        #expect(signed.status == 0, "\(signed.errorOutput)")
        #expect(try fixture.opensslVerifies(document + ".p7s", content: document))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: temporary.url.path).isEmpty,
            "a temporary copy was left"
        )
        #expect(!FileManager.default.fileExists(atPath: fixture.store.path("identities")), "--p12 stored something")
        // With its password, a protected file signs too (and still stores nothing).
        let protected = try fixture.run(
            [
                "sign", document, "--p12", fixture.p12Path, "--password-env", "P", "--out",
                fixture.directory.path("p.p7s"),
            ],
            environment: ["P": fixture.password, "TMPDIR": temporary.url.path]
        )
        #expect(protected.status == 0, "\(protected.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: fixture.store.path("identities")))
    }

    @Test(
        "item 8: --out never replaces a document, a link, a device, a FIFO or a directory; same-name documents refused; - is stdin/stdout; --out-dir created"
    )
    func outputRules() throws {
        let fixture = try CLIFixture()
        let env = ["P": fixture.password]
        let key = ["--p12", fixture.p12Path, "--password-env", "P"]
        let document = try fixture.document("doc.txt", "содержимое\n")

        let overDocument = try fixture.run(["sign", document, "--out", document] + key, environment: env)
        #expect(overDocument.status == 64)
        #expect(try fixture.directory.read("doc.txt") == Array("содержимое\n".utf8))

        for folder in ["a", "b"] {
            try FileManager.default.createDirectory(
                atPath: fixture.directory.path(folder),
                withIntermediateDirectories: true
            )
        }
        let a = try fixture.directory.write("a/same.txt", text: "A")
        let b = try fixture.directory.write("b/same.txt", text: "B")
        let collision = try fixture.run(
            ["sign", a, b, "--out-dir", fixture.directory.path("out")] + key,
            environment: env
        )
        #expect(collision.status == 64)
        #expect(collision.errorOutput.contains(a) && collision.errorOutput.contains(b))
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.path("out/same.txt.p7s")))

        let target = try fixture.directory.write("target.bin", text: "keep")
        let link = fixture.directory.path("link.p7s")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let overLink = try fixture.run(["sign", document, "--out", link] + key, environment: env)
        #expect(overLink.status == 64)
        #expect(overLink.errorOutput.contains("symbolic link"))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == target)
        #expect(try fixture.directory.read("target.bin") == Array("keep".utf8))
        for special in ["/dev/null", fixture.directory.url.path] {
            #expect(try fixture.run(["sign", document, "--out", special] + key, environment: env).status == 64)
        }
        let fifo = fixture.directory.path("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(try fixture.run(["sign", document, "--out", fifo] + key, environment: env).status == 64)

        // A regular file is replaced only with --force, atomically.
        let existing = try fixture.directory.write("existing.p7s", text: "old")
        #expect(try fixture.run(["sign", document, "--out", existing] + key, environment: env).status == 1)
        #expect(try fixture.directory.read("existing.p7s") == Array("old".utf8))
        #expect(try fixture.run(["sign", document, "--out", existing, "--force"] + key, environment: env).status == 0)
        #expect(try fixture.opensslVerifies(existing, content: document))

        // --out - writes DER to stdout; DOCUMENT - reads stdin.
        let toStdout = try fixture.run(["sign", document, "--out", "-"] + key, environment: env)
        #expect(toStdout.status == 0, "\(toStdout.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.path("-")))
        let piped = try fixture.directory.write("piped.p7s", toStdout.standardOutput.map { $0 })
        #expect(try fixture.opensslVerifies(piped, content: document))
        let fromStdin = try fixture.run(
            ["sign", "-", "--out", fixture.directory.path("stdin.p7s")] + key,
            environment: env,
            input: "из потока\n"
        )
        #expect(fromStdin.status == 0, "\(fromStdin.errorOutput)")
        let streamed = try fixture.directory.write("streamed.txt", text: "из потока\n")
        #expect(try fixture.opensslVerifies(fixture.directory.path("stdin.p7s"), content: streamed))

        // --out-dir is created when missing.
        let created = try fixture.run(
            ["sign", a, "--out-dir", fixture.directory.path("new/signed")] + key,
            environment: env
        )
        #expect(created.status == 0, "\(created.errorOutput)")
        #expect(try fixture.opensslVerifies(fixture.directory.path("new/signed/same.txt.p7s"), content: a))
    }

    @Test(
        "item 8a: --provider pkcs12 --param file= says what it stored and where, and replaces only with --replace-identity"
    )
    func provisioningSaysWhatItStores() throws {
        let fixture = try CLIFixture()
        let document = try fixture.document("d.txt", "d")
        let arguments = [
            "sign", document, "--provider", "pkcs12", "--param", "file=\(fixture.p12Path)", "--param-env", "password=P",
        ]
        let first = try fixture.run(arguments, environment: ["P": fixture.password])
        #expect(first.status == 0, "\(first.errorOutput)")
        #expect(
            first.errorOutput.contains("stored") && first.errorOutput.contains("'default'")
                && first.errorOutput.contains("--p12")
        )
        #expect(first.errorOutput.contains(fixture.store.path("identities/default")))
        // (--force: d.txt.p7s exists; the identity is what is refused here.)
        let again = try fixture.run(arguments + ["--force"], environment: ["P": fixture.password])
        #expect(again.status == 1)
        #expect(again.errorOutput.contains("--replace-identity"))
        #expect(
            try fixture.run(arguments + ["--force", "--replace-identity"], environment: ["P": fixture.password]).status
                == 0
        )
    }

    @Test(
        "item 9: journal.sqlite is 0600 and a planted link is refused; identities/ that others own or may write is refused"
    )
    func storeFilesArePrivate() throws {
        let fixture = try CLIFixture()
        let env = ["P": fixture.password]
        let document = try fixture.document("d.txt", "d")
        #expect(
            try fixture.run(["sign", document, "--p12", fixture.p12Path, "--password-env", "P"], environment: env)
                .status == 0
        )
        let mode =
            try FileManager.default.attributesOfItem(atPath: fixture.store.path("journal.sqlite"))[.posixPermissions]
            as? NSNumber
        #expect(mode?.intValue == 0o600)

        let planted = try TemporaryDirectory()
        let victim = try planted.write("victim", text: "not a journal")
        try FileManager.default.createSymbolicLink(atPath: planted.path("journal.sqlite"), withDestinationPath: victim)
        let linked = try CLI.run(["signatures", "list"], store: planted)
        #expect(linked.status == 1)
        #expect(linked.errorOutput.contains("symbolic link"))
        #expect(try planted.read("victim") == Array("not a journal".utf8))

        #expect(
            try fixture.run(
                ["identity", "import", fixture.p12Path, "--alias", "ivanov", "--password-env", "P"],
                environment: env
            ).status == 0
        )
        let identities = fixture.store.path("identities")
        #expect(chmod(identities, 0o777) == 0)
        let writable = try fixture.run(
            ["sign", document, "--identity", "ivanov", "--password-env", "P", "--force"],
            environment: env
        )
        #expect(writable.status == 1)
        #expect(writable.errorOutput.contains("chmod go-w"))
        #expect(chmod(identities, 0o700) == 0)
        if geteuid() == 0 {
            #expect(chown(identities, 65534, 65534) == 0)
            let foreign = try fixture.run(["identity", "list"], environment: env)
            #expect(foreign.status == 1)
            #expect(foreign.errorOutput.contains("another user"))
            #expect(chown(identities, 0, 0) == 0)
        }
        #expect(
            try fixture.run(
                ["sign", document, "--identity", "ivanov", "--password-env", "P", "--force"],
                environment: env
            )
            .status == 0
        )
    }

    @Test(
        "item 10: store entries use 600 000 PBKDF2 iterations; short store passwords refused; import of a password-less file asks for a store password"
    )
    func storePasswords() throws {
        let fixture = try CLIFixture()
        #expect(
            try fixture.run(
                ["identity", "import", fixture.p12Path, "--alias", "strong", "--password-env", "P"],
                environment: ["P": fixture.password]
            ).status == 0
        )
        let stored = try PKCS12IdentityStore(directory: fixture.store.url).pkcs12Data(alias: "strong")
        let file = try PKCS12File(data: try #require(stored), password: Secret(fixture.password))
        #expect(!file.protection.keyEncryption.isEmpty)
        #expect(file.protection.keyEncryption.allSatisfy { ($0.iterations ?? 0) >= 600_000 })
        // One derivation per unlock: no MAC, certificates in the clear (see PKCS12IdentityStore).
        #expect(file.protection.macIterations == nil && file.protection.contentEncryption.isEmpty)

        let p12 = try Self.passwordlessP12(fixture)
        let without = try fixture.run(["identity", "import", p12, "--alias", "nopass"])
        #expect(without.status == 1)
        #expect(without.errorOutput.contains("--store-password-env"))
        let short = try fixture.run(
            ["identity", "import", p12, "--alias", "nopass", "--store-password-env", "S"],
            environment: ["S": "x"]
        )
        #expect(short.status == 1)
        #expect(short.errorOutput.contains("8 characters"))
        let good = try fixture.run(
            ["identity", "import", p12, "--alias", "nopass", "--store-password-env", "S"],
            environment: ["S": "long enough"]
        )
        #expect(good.status == 0, "\(good.errorOutput)")
        let document = try fixture.document("d.txt", "d")
        #expect(
            try fixture.run(
                ["sign", document, "--identity", "nopass", "--password-env", "S"],
                environment: ["S": "long enough"]
            ).status == 0
        )
    }

    @Test("item 11: the emulator refuses a non-loopback address without --allow-remote")
    func emulatorStaysLocal() throws {
        let refused = try CLI.run(["emulator", "--host", "0.0.0.0"])
        #expect(refused.status == 64)
        #expect(refused.errorOutput.contains("--allow-remote"))
        let (process, output) = try Self.start(["emulator", "--host", "0.0.0.0", "--allow-remote", "--port", "0"])
        #expect(output.contains("listening on http://0.0.0.0:"), "\(output)")
        // SIGTERM right after "listening" was read stops it (it was once lost in a race, and the
        // run hung in waitUntilExit).
        #expect(Self.stop(process), "the emulator did not stop within 10 s of SIGTERM")
    }

    @Test("item 13: a running certsign has core dumps off (RLIMIT_CORE 0) and is not dumpable")
    func noCoreDumps() throws {
        // Not dumpable makes /proc/<pid> root's: run certsign as nobody to see it.
        let asNobody =
            geteuid() == 0
            ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", CLI.binary] : [CLI.binary]
        let (process, output) = try Self.start(["emulator", "--port", "0"], command: asNobody)
        defer { Self.stop(process) }
        #expect(output.contains("listening"), "\(output)")
        let pid = process.processIdentifier
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let core = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        #expect(
            core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"],
            "\(core)"
        )
        var info = stat()
        #expect(stat("/proc/\(pid)/status", &info) == 0)
        #expect(info.st_uid == 0, "/proc/<pid> of a non-dumpable process belongs to root")
        if geteuid() == 0 {
            // The same check has a meaning: a dumpable process run as nobody owns its /proc entry.
            let (sleeper, _) = try Self.start(
                [],
                command: [
                    "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c",
                    "echo up; sleep 30",
                ]
            )
            defer { Self.stop(sleeper) }
            var other = stat()
            #expect(stat("/proc/\(sleeper.processIdentifier)/status", &other) == 0)
            #expect(other.st_uid == 65534)
        }
    }

    /// Starts a long-running command and returns it with its first line of output.
    /// Sends SIGTERM and waits up to 10 s for the process to end, then kills it (a test never hangs
    /// on a child). Returns whether SIGTERM alone ended it.
    @discardableResult
    static func stop(_ process: Process) -> Bool {
        process.terminate()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        let stopped = !process.isRunning
        if !stopped { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return stopped
    }

    static func start(_ arguments: [String], command: [String] = [CLI.binary]) throws -> (Process, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst()) + arguments
        process.environment = ["PATH": "/usr/bin:/bin", "CERTSIGN_HOME": "/nonexistent-certsign-home"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        var line = Data()
        let handle = pipe.fileHandleForReading
        while !line.contains(0x0A) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        return (process, String(decoding: line, as: UTF8.self))
    }
}
