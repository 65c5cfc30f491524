import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import Signing
import TestSupport
import Testing

/// The random-delay kills of ``CrashSafetyTests`` land mostly before or after the few microseconds
/// in which files change. Here `strace` kills `certsign` exactly on entry to the N-th call of each
/// file-system step (mkdir, fsync, rename/renameat2, link, unlink, rmdir, and SQLite's pwrite/fdatasync),
/// for every N a clean run makes, so every gap between two durable steps of import (replacing an
/// entry), signing (file + journal row) and export is hit once.
@Suite(.serialized, .enabled(if: ExternalTool.isAvailable("strace"), "needs strace to kill at exact system calls"))
struct KillPointTests {
    static let steps = [
        "mkdir", "mkdirat", "rename", "renameat", "renameat2", "link", "linkat", "unlink", "unlinkat", "rmdir", "fsync",
        "fdatasync", "pwrite64",
    ]

    /// The fixture's environment for a process run under strace: LeakSanitizer cannot run under
    /// ptrace, so an AddressSanitizer build (`make test-asan`) turns leak checking off there.
    static func tracedEnvironment(_ fixture: CrashFixture) -> [String: String] {
        var environment = fixture.environment
        let options = ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map { $0 + ":" } ?? ""
        environment["ASAN_OPTIONS"] = options + "detect_leaks=0"
        return environment
    }

    /// How many times a clean run calls each step. `seccomp` (`--seccomp-bpf`) stops the process only
    /// at the traced calls, not at each of the ~30 system calls per document of a large batch.
    static func countSteps(
        _ arguments: [String],
        fixture: CrashFixture,
        steps: [String] = steps,
        seccomp: Bool = false
    ) throws -> [String: Int] {
        let trace = fixture.work.path("logs/trace-\(UUID().uuidString)")
        let result = try ExternalTool.run(
            "strace",
            ["-f"] + (seccomp ? ["--seccomp-bpf"] : []) + [
                "-qq", "-o", trace, "-e", "trace=\(steps.joined(separator: ","))", CLI.binary,
            ] + arguments,
            environment: tracedEnvironment(fixture)
        )
        try #require(result.succeeded, "traced run failed: \(result.errorOutput)")
        var counts: [String: Int] = [:]
        for line in try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        where !line.contains("resumed>") {
            for step in steps where line.contains(" \(step)(") { counts[step, default: 0] += 1 }
        }
        return counts
    }

    /// Runs `certsign arguments` under strace, SIGKILLed on entry to the `occurrence`-th `step`.
    /// `seccomp` adds `--seccomp-bpf` for the first occurrence only: strace 6.1 with `-f --seccomp-bpf`
    /// never fires `inject=…:when=N` for N ≥ 2 in a thread (the workers and the coordinator run on
    /// threads), so those kills would silently not happen; without it strace stops at every system call
    /// (about 5 s for 2000 documents).
    static func runKilled(
        at step: String,
        occurrence: Int,
        _ arguments: [String],
        fixture: CrashFixture,
        seccomp: Bool = false
    ) throws -> Subprocess.Outcome {
        let pid = try Subprocess.start(
            arguments,
            environment: tracedEnvironment(fixture),
            log: fixture.log("\(step)-\(occurrence)"),
            via: ["strace", "-f"] + (seccomp && occurrence == 1 ? ["--seccomp-bpf"] : []) + [
                "-qq", "-o", "/dev/null", "-e", "trace=\(step)", "-e", "inject=\(step):signal=KILL:when=\(occurrence)",
            ]
        )
        return Subprocess.wait(pid)
    }

    /// ``runKilled(at:occurrence:_:fixture:seccomp:)`` at `point` and the expectation every kill makes: the process
    /// was killed, or it finished with exit 0 before the step came round again.
    static func killOrFinish(
        at point: KillPoint,
        _ arguments: [String],
        fixture: CrashFixture,
        seccomp: Bool = false,
        context: String
    ) throws -> Subprocess.Outcome {
        let outcome = try runKilled(
            at: point.step,
            occurrence: point.occurrence,
            arguments,
            fixture: fixture,
            seccomp: seccomp
        )
        #expect(outcome == .signaled(SIGKILL) || outcome.succeeded, "\(context): \(outcome)")
        return outcome
    }

    @Test func killAtEveryFileSystemStep() async throws {
        let fixture = try CrashFixture(keyType: .p256)
        var imported: Set<String> = []
        for alias in ["signer", "replaced"] {
            let log = fixture.log("import-\(alias)")
            let (outcome, _) = try Subprocess.run(
                fixture.importArguments(alias: alias),
                environment: fixture.environment,
                log: log
            )
            try #require(outcome.succeeded, "import: \(Subprocess.errors(log))")
            imported.insert(alias)
        }
        var killed: [String: Int] = [:]
        /// ``killOrFinish(at:_:fixture:seccomp:context:)``, a kill that landed counted under `operation`.
        func kill(
            _ operation: String,
            at point: KillPoint,
            _ arguments: [String],
            context: String
        ) throws
            -> Subprocess.Outcome
        {
            let outcome = try Self.killOrFinish(at: point, arguments, fixture: fixture, context: context)
            if outcome == .signaled(SIGKILL) { killed[operation, default: 0] += 1 }
            return outcome
        }

        // Import replacing an entry: at no step may the entry vanish or be broken.
        let replace = fixture.importArguments(alias: "replaced", replace: true)
        for point in KillPoint.all(try Self.countSteps(replace, fixture: fixture)) {
            let context = "import killed at \(point)"
            _ = try kill("import", at: point, replace, context: context)
            try fixture.checkIdentities(mustHave: imported, context: context)
        }

        // Import of a new alias.
        let probeImport = fixture.importArguments(alias: "probe")
        imported.insert("probe")
        for point in KillPoint.all(try Self.countSteps(probeImport, fixture: fixture)) {
            let alias = "new-\(point.step)-\(point.occurrence)"
            let context = "new import killed at \(point)"
            let outcome = try kill("import", at: point, fixture.importArguments(alias: alias), context: context)
            if outcome.succeeded { imported.insert(alias) }
            try fixture.checkIdentities(mustHave: imported, open: alias, context: context)
        }

        // Signing two documents (one file and one journal row each), first into a journal that does
        // not exist yet (the first signature creates the database and its schema).
        var signed: [String] = []
        var attempted: [String] = []
        var run = 0
        func documents() throws -> [String] {
            run += 1
            let made = try (0..<2).map {
                try fixture.work.write("k\(run)-\($0).txt", text: "kill point \(run)/\($0)\n")
            }
            attempted += made
            return made
        }
        func removeJournal() {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                try? FileManager.default.removeItem(atPath: fixture.journalURL.path + suffix)
            }
        }
        let firstSignCounts = try Self.countSteps(fixture.signArguments(try documents()), fixture: fixture)
        for point in KillPoint.all(firstSignCounts, every: { $0 == "pwrite64" ? 4 : 1 }) {
            removeJournal()
            let batch = try documents()
            let context = "first sign killed at \(point)"
            let outcome = try kill("sign (new journal)", at: point, fixture.signArguments(batch), context: context)
            try await fixture.checkJournal(mustHave: outcome.succeeded ? batch : [], context: context)
            let list = try fixture.certsign(["--json", "signatures", "list"])
            #expect(list.status == 0, "\(context): the journal is unusable: \(list.errorOutput)")
        }

        // Then into the existing journal.
        removeJournal()
        let setup = try documents()
        #expect(try fixture.certsign(fixture.signArguments(setup)).status == 0)
        signed += setup
        let probe = try documents()
        signed += probe
        // SQLite writes many pages: every third pwrite is enough to hit each transaction phase.
        let signCounts = try Self.countSteps(fixture.signArguments(probe), fixture: fixture)
        for point in KillPoint.all(signCounts, every: { $0 == "pwrite64" ? 3 : 1 }) {
            let batch = try documents()
            let context = "sign killed at \(point)"
            let outcome = try kill("sign", at: point, fixture.signArguments(batch), context: context)
            if outcome.succeeded { signed += batch }
            try await fixture.checkJournal(mustHave: signed, context: context)
        }
        for document in attempted where FileManager.default.fileExists(atPath: document + ".p7s") {
            let result = try await fixture.verify(document + ".p7s", over: document)
            #expect(result.isValid, "\(document).p7s exists under its final name but does not verify: \(result)")
        }

        // Export.
        let probePath = fixture.work.path("probe.p12")
        for point in KillPoint.all(try Self.countSteps(fixture.exportArguments(to: probePath), fixture: fixture)) {
            let path = fixture.work.path("x-\(point.step)-\(point.occurrence).p12")
            let context = "export killed at \(point)"
            let outcome = try kill("export", at: point, fixture.exportArguments(to: path), context: context)
            if outcome.succeeded || FileManager.default.fileExists(atPath: path) {
                #expect(try fixture.opensslOpens(path), "\(context) left a file openssl cannot open")
            }
        }

        // Every command still works on the store.
        let list = try fixture.certsign(["--json", "identity", "list"])
        let listed = Set(
            try #require(try CrashFixture.json(list)["identities"] as? [[String: Any]]).compactMap {
                $0["alias"] as? String
            }
        )
        #expect(
            imported.isSubset(of: listed) && listed == Set(CrashFixture.names(in: fixture.identitiesDirectory).visible)
        )
        let final = try fixture.work.write("final.txt", text: "final\n")
        #expect(try fixture.certsign(fixture.signArguments([final], identity: "replaced")).status == 0)
        #expect(try fixture.certsign(["verify", final + ".p7s", "--ca", fixture.rootPath]).status == 0)
        #expect(try fixture.certsign(["--json", "signatures", "list"]).status == 0)
        #expect(
            ["import", "sign (new journal)", "sign", "export"].allSatisfy { killed[$0, default: 0] > 0 },
            "\(killed)"
        )
        try fixture.work.write("report.txt", text: "kill points: \(killed)")
        if let path = ProcessInfo.processInfo.environment["CRASH_SAFETY_REPORT"] {
            try? "kill points: \(killed)\n".write(toFile: path + ".points", atomically: true, encoding: .utf8)
        }
    }
}

/// One place to kill a traced run: on entry to the `occurrence`-th call of system call `step`.
struct KillPoint: CustomStringConvertible {
    let step: String
    let occurrence: Int

    var description: String { "\(step) #\(occurrence)" }

    /// Every `every(step)`-th occurrence (from the first) of each step a clean run made, steps in name
    /// order.
    /// - Parameters:
    ///   - counts: how often a clean run calls each step (``KillPointTests/countSteps(_:fixture:steps:seccomp:)``).
    ///   - every: the stride of a step's occurrences (1: every occurrence).
    static func all(_ counts: [String: Int], every: (String) -> Int = { _ in 1 }) -> [KillPoint] {
        counts.sorted { $0.key < $1.key }.flatMap { step, count in
            stride(from: 1, through: count, by: every(step)).map { KillPoint(step: step, occurrence: $0) }
        }
    }
}
