import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// `certsign` ships without the emulator: the manifest and the linked binary agree, and `certsign
/// emulator` / `certsign demo` run the `certsign-emulator` beside it (or say where they looked).
@Suite("certsign does not link the emulator; it runs certsign-emulator beside it")
struct EmulatorPackagingTests {
    /// Every target a product reaches through target dependencies, from `swift package dump-package`.
    static func targetClosure(ofProduct product: String, in manifest: [String: Any]) throws -> Set<String> {
        let products = try #require(manifest["products"] as? [[String: Any]])
        let roots = try #require(products.first { $0["name"] as? String == product }?["targets"] as? [String])
        let targets = try #require(manifest["targets"] as? [[String: Any]])
        var dependencies: [String: [String]] = [:]
        for target in targets {
            guard let name = target["name"] as? String else { continue }
            // Each dependency is {"byName": [NAME, condition]} or {"target": [NAME, condition]}.
            let names = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                dependency.values.compactMap { ($0 as? [Any])?.first as? String }.first
            }
            dependencies[name] = names
        }
        var reached: Set<String> = []
        var queue = roots
        while let next = queue.popLast() {
            guard reached.insert(next).inserted else { continue }
            queue += dependencies[next] ?? []
        }
        return reached
    }

    /// The shared libraries a binary names itself (`DT_NEEDED`, from `readelf -d`).
    static func neededLibraries(_ binary: String) throws -> [String] {
        let result = try ExternalTool.run("readelf", ["-d", binary])
        #expect(result.succeeded, "\(result.errorOutput)")
        return result.output.split(separator: "\n").filter { $0.contains("(NEEDED)") }.map(String.init)
    }

    @Test(
        "dump-package: the certsign product's targets reach neither EmulatorKit nor libmicrohttpd; certsign-emulator's do"
    )
    func manifestClosure() throws {
        let scratch = try TemporaryDirectory()
        let dump = try ExternalTool.run(
            "swift",
            ["package", "--scratch-path", scratch.url.path, "dump-package"],
            directory: PackageRoot.url
        )
        #expect(dump.succeeded, "\(dump.errorOutput)")
        let manifest = try #require(try JSONSerialization.jsonObject(with: dump.standardOutput) as? [String: Any])
        let certsign = try Self.targetClosure(ofProduct: "certsign", in: manifest)
        #expect(certsign.contains("CertSignCLI"))
        #expect(certsign.isDisjoint(with: ["EmulatorKit", "CMicroHTTPD", "CMicroHTTPDShims"]), "\(certsign.sorted())")
        let emulator = try Self.targetClosure(ofProduct: "certsign-emulator", in: manifest)
        #expect(emulator.isSuperset(of: ["EmulatorKit", "CMicroHTTPD", "CMicroHTTPDShims"]), "\(emulator.sorted())")
    }

    @Test("the built certsign links no libmicrohttpd and names no GnuTLS; certsign-emulator links both")
    func linkedLibraries() throws {
        let certsign = try #require(ExternalTool.builtProduct("certsign"))
        let emulator = try #require(ExternalTool.builtProduct("certsign-emulator"))
        let ldd = try ExternalTool.run("ldd", [certsign])
        #expect(ldd.succeeded, "\(ldd.errorOutput)")
        #expect(!ldd.output.contains("libmicrohttpd"), "\(ldd.output)")
        // GnuTLS reaches every process through libqpdf and libcurl's librtmp, so the check is on what
        // the binary itself names; the emulator names it (client-certificate checks) so this can fail.
        let ownCertsign = try Self.neededLibraries(certsign)
        #expect(!ownCertsign.contains { $0.contains("libmicrohttpd") || $0.contains("libgnutls") }, "\(ownCertsign)")
        let ownEmulator = try Self.neededLibraries(emulator)
        #expect(ownEmulator.contains { $0.contains("libmicrohttpd") }, "\(ownEmulator)")
        #expect(ownEmulator.contains { $0.contains("libgnutls") }, "\(ownEmulator)")
    }

    @Test("certsign alone in a directory: emulator and demo exit 69 naming where they looked")
    func missingSibling() throws {
        let directory = try TemporaryDirectory()
        let lonely = directory.path("certsign")
        // cp(1), not this process: a copy written here could still be open for writing in a child
        // another test forks meanwhile, and running it would fail with ETXTBSY.
        #expect(try ExternalTool.run("cp", [CLI.binary, lonely]).succeeded)
        let expected = directory.url.resolvingSymlinksInPath().appendingPathComponent("certsign-emulator").path
        for arguments in [["emulator", "--port", "0"], ["demo"]] {
            let result = try ExternalTool.run(lonely, arguments, environment: ["CERTSIGN_HOME": directory.path("home")])
            #expect(result.status == 69, "\(arguments): \(result.output) \(result.errorOutput)")
            #expect(
                result.errorOutput.contains("certsign-emulator not found: looked for \(expected)"),
                "\(result.errorOutput)"
            )
            #expect(result.errorOutput.contains("make install"), "\(result.errorOutput)")
            #expect(result.output.isEmpty, "\(arguments) printed before it failed: \(result.output)")
        }
        let json = try ExternalTool.run(lonely, ["--json", "emulator"])
        #expect(json.status == 69)
        #expect(
            try CLI.json(json)["error"].flatMap { ($0 as? [String: Any])?["code"] as? String } == "emulatorUnavailable"
        )
        // Help is certsign's own: it needs no emulator.
        let help = try ExternalTool.run(lonely, ["emulator", "--help"])
        #expect(help.status == 0 && help.output.contains("--require-client-cert"), "\(help.errorOutput)")
    }

    @Test("CERTSIGN_EMULATOR names the program for certsign installed elsewhere; a wrong path is named")
    func environmentOverride() throws {
        let directory = try TemporaryDirectory()
        let lonely = directory.path("certsign")
        // cp(1), not this process: a copy written here could still be open for writing in a child
        // another test forks meanwhile, and running it would fail with ETXTBSY.
        #expect(try ExternalTool.run("cp", [CLI.binary, lonely]).succeeded)
        let emulator = try #require(ExternalTool.builtProduct("certsign-emulator"))
        let demo = try ExternalTool.run(
            lonely,
            ["demo"],
            environment: ["CERTSIGN_EMULATOR": emulator, "CERTSIGN_HOME": directory.path("home")]
        )
        #expect(demo.status == 0, "\(demo.errorOutput)")
        #expect(demo.output.contains("demo finished"), "\(demo.output)")
        let wrong = try ExternalTool.run(
            lonely,
            ["emulator"],
            environment: ["CERTSIGN_EMULATOR": directory.path("none")]
        )
        #expect(wrong.status == 69)
        #expect(
            wrong.errorOutput.contains("$CERTSIGN_EMULATOR names \(directory.path("none"))"),
            "\(wrong.errorOutput)"
        )
    }

    /// The one child of `process` (spawned from any of its threads), and its command line.
    static func child(of process: Process) throws -> (pid: pid_t, commandLine: String) {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/task")
        let children = tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\(task)/children", encoding: .utf8))
                ?? "").split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let child = try #require(children.first, "certsign started no child")
        return (child, try String(contentsOfFile: "/proc/\(child)/cmdline", encoding: .utf8))
    }

    /// Whether `pid` runs (a zombie, ended but not yet reaped, does not), waiting up to 10 s for it to end.
    static func stillRuns(_ pid: pid_t) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        repeat {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let state = stat.split(separator: ")").last?.split(separator: " ").first, state != "Z"
            else { return false }
            usleep(50_000)
        } while Date() < deadline
        return true
    }

    @Test("SIGTERM to certsign emulator reaches certsign-emulator: both end, exit code 0, nothing left running")
    func signalsReachTheChild() throws {
        let (process, line) = try FileSafetyCommandTests.start(["emulator", "--port", "0"])
        #expect(line.contains("DSS emulator listening on http://127.0.0.1:"), "\(line)")
        let child = try Self.child(of: process)
        #expect(child.commandLine.hasSuffix("certsign-emulator\0--port\00\0"), "\(child.commandLine.debugDescription)")
        #expect(FileSafetyCommandTests.stop(process), "certsign did not stop within 10 s of SIGTERM")
        #expect(process.terminationStatus == 0)
        #expect(!Self.stillRuns(child.pid), "certsign-emulator \(child.pid) still runs")
    }

    @Test("certsign killed with SIGKILL (which it cannot pass on): certsign-emulator stops by itself")
    func childEndsWithItsParent() throws {
        let (process, line) = try FileSafetyCommandTests.start(["emulator", "--port", "0"])
        #expect(line.contains("DSS emulator listening on"), "\(line)")
        let child = try Self.child(of: process)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(!Self.stillRuns(child.pid), "certsign-emulator \(child.pid) outlived certsign")
    }
}
