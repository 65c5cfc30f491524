import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Glibc
import SignatureJournal
import SignatureJournalPostgres
import Signing
import TestSupport
import Testing

/// Batch signing (`certsign sign` of many files with `--out-dir`) commits durability per group:
/// every `.p7s` still goes temporary file → `fsync` → rename, but the output directory is synced
/// once and the journal commits once per group (``SigningCoordinator/batchGroupSize``). These tests
/// kill the real binary with SIGKILL during a 2000-document batch, at random moments and exactly at
/// file-system steps (strace), and check what "acknowledged" promises: every journal row names a
/// `.p7s` that exists and verifies, and no file under a final `.p7s` name is torn.
@Suite(.serialized)
struct BatchCrashTests {
    static let batchSize = 2000

    /// The traced steps: ``KillPointTests/steps`` and `syncfs`, the one flush of a group's file system
    /// (a group with at least 8 files on one file system writes them without `fsync`, syncs the file
    /// system once, then renames them into place).
    static let steps = KillPointTests.steps + ["syncfs"]

    /// A fixture with the signer imported and `count` documents of 1 KiB in `docs/`.
    static func makeBatch(count: Int) throws -> (CrashFixture, [String]) {
        let fixture = try CrashFixture(keyType: .p256)
        let (outcome, _) = try Subprocess.run(
            fixture.importArguments(alias: "signer"),
            environment: fixture.environment,
            log: fixture.log("import")
        )
        try #require(outcome.succeeded, "import failed")
        try FileManager.default.createDirectory(atPath: fixture.work.path("docs"), withIntermediateDirectories: true)
        var random = SplitMix64(seed: 18)
        let documents = try (0..<count).map { index in
            let path = fixture.work.path("docs/d\(index).txt")
            var bytes = [UInt8](repeating: 0, count: 1024)
            for offset in bytes.indices { bytes[offset] = UInt8(truncatingIfNeeded: random.next()) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return path
        }
        return (fixture, documents)
    }

    static func arguments(_ fixture: CrashFixture, _ documents: [String], into directory: String) -> [String] {
        fixture.signArguments(documents) + ["--out-dir", directory]
    }

    /// What one killed (or finished) batch left in `directory`.
    struct Left {
        var rows = 0
        var orphans = 0
        var hiddenTemporaries = 0
    }

    /// The journal (the store's, or `location`) is intact; each of its rows for `directory` names a file that exists and
    /// verifies over its document; every visible `.p7s` in `directory` verifies (none is torn).
    static func check(
        _ fixture: CrashFixture,
        directory: String,
        mustHaveAll documents: [String]?,
        journal location: JournalLocation? = nil,
        context: String
    ) async throws -> Left {
        let journal = try SignatureJournal(opening: location ?? .sqlite(fixture.journalURL))
        try await journal.checkIntegrity()
        var rowFiles = Set<String>()
        for record in try await journal.records() {
            guard case .file(let url) = record.storage, url.path.hasPrefix(directory + "/") else { continue }
            rowFiles.insert(url.lastPathComponent)
            #expect(
                FileManager.default.fileExists(atPath: url.path),
                "row \(record.id) names a missing \(url.path); \(context)"
            )
        }
        let names = CrashFixture.names(in: directory)
        for name in names.visible {
            #expect(name.hasSuffix(".p7s"), "unexpected file \(name); \(context)")
            let document = fixture.work.path("docs/" + String(name.dropLast(4)))
            let result = try await fixture.verify(directory + "/" + name, over: document)
            #expect(result.isValid, "\(name) exists under its final name but does not verify: \(result); \(context)")
        }
        if let documents {
            let missing = documents.filter { !rowFiles.contains(URL(fileURLWithPath: $0).lastPathComponent + ".p7s") }
            #expect(missing.isEmpty, "\(missing.count) signed documents have no journal row; \(context)")
        }
        var left = Left()
        left.rows = rowFiles.count
        left.orphans = Set(names.visible).subtracting(rowFiles).count
        left.hiddenTemporaries = names.hidden.count
        return left
    }

    /// ``KillPointTests/countSteps(_:fixture:steps:seccomp:)`` with `--seccomp-bpf`, `syncfs` counted too.
    static func countSteps(_ arguments: [String], fixture: CrashFixture) throws -> [String: Int] {
        try KillPointTests.countSteps(arguments, fixture: fixture, steps: steps, seccomp: true)
    }

    @Test func killedAtRandomDuringATwoThousandDocumentBatch() async throws {
        let (fixture, documents) = try Self.makeBatch(count: Self.batchSize)
        // A clean run: everything acknowledged, and how long a batch takes here (to aim the kills).
        let clean = fixture.work.path("out-clean")
        let (outcome, seconds) = try Subprocess.run(
            Self.arguments(fixture, documents, into: clean),
            environment: fixture.environment,
            log: fixture.log("clean")
        )
        try #require(outcome.succeeded, "clean batch failed: \(Subprocess.errors(fixture.log("clean")))")
        let all = try await Self.check(
            fixture,
            directory: clean,
            mustHaveAll: documents,
            context: "clean run"
        )
        #expect(all.rows == Self.batchSize && all.orphans == 0 && all.hiddenTemporaries == 0, "\(all)")

        // Start-up and unlocking the identity, which a one-document run takes too: the kills aim after it
        // (the signing itself now takes a small part of a run).
        let (single, startup) = try Subprocess.run(
            Self.arguments(fixture, [documents[0]], into: fixture.work.path("out-startup")),
            environment: fixture.environment,
            log: fixture.log("startup")
        )
        try #require(single.succeeded, "one-document run failed: \(Subprocess.errors(fixture.log("startup")))")
        // The aim follows the machine: a kill that lands before signing began moves the next ones later,
        // a run that finished before its kill moves them earlier (a loaded machine's speed drifts
        // between the calibration and the kills). Six runs; if none landed mid-batch (a loaded machine,
        // ASan), up to six more aimed at a random number of signatures written instead of at a time.
        var startupEstimate = startup
        var signingEstimate = max(0.05, seconds - startup)
        var random = SplitMix64(seed: 0x18_2000)
        var killedWithRows = 0
        var killedMidBatch = 0
        for run in 1...12 where run <= 6 || killedMidBatch == 0 {
            let directory = fixture.work.path("out-\(run)")
            // Spread over the signing part of the run (and a little before and after it).
            let spread = 0.05 + 1.0 * Double(random.next() % 1000) / 1000
            let delay = max(0.01, startupEstimate * 0.9 + signingEstimate * spread)
            let log = fixture.log("random-\(run)")
            let written = run <= 6 ? 0 : 1 + Int(random.next() % UInt64(Self.batchSize - 1))
            let arguments = Self.arguments(fixture, documents, into: directory)
            let (killed, _) =
                run <= 6
                ? try Subprocess.runKilled(after: delay, arguments, environment: fixture.environment, log: log)
                : try Subprocess.runKilled(
                    when: { CrashFixture.visibleCount(in: directory) >= written },
                    arguments,
                    environment: fixture.environment,
                    log: log
                )
            #expect(killed == .signaled(SIGKILL) || killed.succeeded, "run \(run): \(killed) \(Subprocess.errors(log))")
            let left = try await Self.check(
                fixture,
                directory: directory,
                mustHaveAll: killed.succeeded ? documents : nil,
                context: run <= 6 ? "killed after \(delay) s (run \(run))" : "killed at \(written) files (run \(run))"
            )
            if killed == .signaled(SIGKILL) {
                if left.rows > 0 { killedWithRows += 1 }
                // Signing had begun: files under final names, or the hidden temporary files of a group
                // whose names are given only after its syncfs.
                let begun = left.rows + left.orphans + left.hiddenTemporaries > 0
                if begun && left.rows < Self.batchSize { killedMidBatch += 1 }
                if !begun { startupEstimate *= 1.25 }
            } else if killed.succeeded {
                startupEstimate *= 0.8
                signingEstimate *= 0.8
            }
            // Acknowledged rows come in whole groups.
            #expect(
                left.rows % SigningCoordinator.batchGroupSize == 0 || left.rows == Self.batchSize,
                "run \(run): \(left.rows) rows is not a whole number of groups"
            )
        }
        // The journal still works for the next command.
        #expect(try fixture.certsign(["--json", "signatures", "list"]).status == 0)
        // Under a loaded machine the kills may land early; at least one must hit the signing itself.
        #expect(killedMidBatch > 0, "no kill landed while the batch was signing (clean run took \(seconds) s)")
        try fixture.work.write(
            "batch-report.txt",
            text: "clean \(seconds) s; kills mid-batch \(killedMidBatch), with acknowledged rows \(killedWithRows)\n"
        )
    }

    @Test(.enabled(if: ExternalTool.isAvailable("strace"), "needs strace to kill at exact system calls"))
    func killedAtEveryFileSystemStepOfABatch() async throws {
        let (fixture, documents) = try Self.makeBatch(count: Self.batchSize)
        // A small batch: every occurrence of every step (each gap between two durable steps). Six
        // files are too few for a syncfs: each is fsynced and renamed at once.
        let small = Array(documents.prefix(6))
        var run = 0
        var killed = 0
        let smallCounts = try Self.countSteps(
            Self.arguments(fixture, small, into: fixture.work.path("count-small")),
            fixture: fixture
        )
        #expect(smallCounts["syncfs"] == nil && smallCounts["fsync", default: 0] >= small.count, "\(smallCounts)")
        for point in KillPoint.all(smallCounts, every: { $0 == "pwrite64" ? 3 : 1 }) {
            run += 1
            let directory = fixture.work.path("small-\(run)")
            let context = "6 documents killed at \(point)"
            let (outcome, _) = try await fixture.signKilled(small, at: point, into: directory, context: context)
            if outcome == .signaled(SIGKILL) { killed += 1 }
        }
        #expect(killed > 0)

        // The whole batch: the steps around each group's directory sync and journal commit.
        let counts = try Self.countSteps(
            Self.arguments(fixture, documents, into: fixture.work.path("count-large")),
            fixture: fixture
        )
        let group = SigningCoordinator.batchGroupSize
        var points: [KillPoint] = []
        for (step, count) in counts.sorted(by: { $0.key < $1.key }) {
            var occurrences: Set<Int> = [1]
            if step == "syncfs" {
                // One per group: after its files are written, before any of them is renamed.
                occurrences.formUnion(1...count)
            } else if step == "fsync" {
                // The directory of each group (after its renames), and the journal's.
                occurrences.formUnion([2, 3, group, group + 1, group + 2, count])
            } else if step == "rename" || step == "renameat" || step == "renameat2" {
                // After a group's syncfs: its first rename, one in the middle, its last, the next group's first.
                occurrences.formUnion([group / 2, group, group + 1])
            } else {
                occurrences.insert(max(1, count / 2))
            }
            points += occurrences.filter { $0 <= count }.sorted().map { KillPoint(step: step, occurrence: $0) }
        }
        var acknowledgedAfterKill = 0
        for point in points {
            run += 1
            let directory = fixture.work.path("large-\(run)")
            let context = "2000 documents killed at \(point)"
            let (outcome, left) = try await fixture.signKilled(documents, at: point, into: directory, context: context)
            if outcome == .signaled(SIGKILL) && left.rows > 0 { acknowledgedAfterKill += 1 }
        }
        // Some kills land after a group was committed: its rows survive the kill.
        #expect(acknowledgedAfterKill > 0, "no kill landed after a committed group: \(points)")
        #expect(try fixture.certsign(["--json", "signatures", "list"]).status == 0)
    }

    /// A group large enough for one `syncfs` (12 files in one directory), killed at every
    /// occurrence of every traced step: after all writes and before the `syncfs`, after it and
    /// before the renames, between renames, after the renames before the directory sync, and before
    /// the journal commit. No final name appears before the `syncfs`; the renames come one after
    /// another after it; the journal has no row before every file of the group has its name; the
    /// hidden temporary files a kill leaves are ignored by `signatures list` and by the next run.
    @Test(.enabled(if: ExternalTool.isAvailable("strace"), "needs strace to kill at exact system calls"))
    func killedAtEveryStepOfAGroupMadeDurableBySyncfs() async throws {
        let (fixture, documents) = try Self.makeBatch(count: 12)
        let counts = try Self.countSteps(
            Self.arguments(fixture, documents, into: fixture.work.path("count")),
            fixture: fixture
        )
        // One syncfs for the group and no fsync per file (only the directory's and the journal's).
        #expect(counts["syncfs"] == 1, "\(counts)")
        #expect(counts["fsync", default: 0] < documents.count, "\(counts)")
        let renames = counts["rename", default: 0] + counts["renameat", default: 0] + counts["renameat2", default: 0]
        #expect(renames >= documents.count, "\(counts)")
        var killedBeforeSync: String?
        var killedMidRenames = false
        var killedAfterRenamesBeforeCommit = false
        for point in KillPoint.all(counts) {
            let (step, occurrence) = (point.step, point.occurrence)
            let directory = fixture.work.path("group-\(step)-\(occurrence)")
            let context = "12 documents killed at \(point)"
            let (outcome, left) = try await fixture.signKilled(documents, at: point, into: directory, context: context)
            if step == "syncfs" || (renames == documents.count && step.hasPrefix("rename")) {
                // Called on one thread only, so strace's per-thread count is the batch's.
                #expect(outcome == .signaled(SIGKILL), "the kill did not land; \(context)")
            }
            guard outcome == .signaled(SIGKILL) else { continue }
            let visible = CrashFixture.names(in: directory).visible.count
            switch step {
            case "syncfs":
                // Every signature is written, none has its final name: only hidden temporaries.
                #expect(
                    visible == 0 && left.rows == 0 && left.hiddenTemporaries == documents.count,
                    "\(left), \(visible) visible; \(context)"
                )
                killedBeforeSync = directory
            case "rename", "renameat", "renameat2":
                // The renames follow the syncfs one by one, on one thread; no row before the last.
                #expect(left.rows == 0, "\(left); \(context)")
                if renames == documents.count {
                    #expect(visible == occurrence - 1, "\(visible) visible; \(context)")
                }
                if visible > 0 && visible < documents.count { killedMidRenames = true }
            default:
                break
            }
            if visible == documents.count && left.rows == 0 { killedAfterRenamesBeforeCommit = true }
            if visible > 0 {
                // A final name only after the syncfs: every file of the group is either renamed or still hidden.
                #expect(left.hiddenTemporaries == documents.count - visible, "\(left); \(context)")
            }
            // openssl too verifies every file the journal lists.
            for document in documents where left.rows > 0 {
                let signature = directory + "/" + URL(fileURLWithPath: document).lastPathComponent + ".p7s"
                #expect(try fixture.opensslVerifies(signature, content: document), "\(signature); \(context)")
            }
        }
        #expect(killedBeforeSync != nil, "no kill landed between the writes and the syncfs: \(counts)")
        #expect(killedMidRenames, "no kill landed between two renames: \(counts)")
        #expect(killedAfterRenamesBeforeCommit, "no kill landed after the renames, before the commit: \(counts)")

        // What a kill before the syncfs left is ignored: the journal lists nothing there, and
        // signing again into the same directory makes and records every signature.
        let directory = try #require(killedBeforeSync)
        let listed = try fixture.certsign(["--json", "signatures", "list"])
        #expect(listed.status == 0)
        #expect(!listed.output.contains(".tmp-"), "a temporary file is listed: \(listed.output)")
        // The killed batch's temporary files, aged an hour (a batch writing the same outputs removes
        // them whatever their age).
        let hidden = CrashFixture.names(in: directory).hidden
        #expect(hidden.count == documents.count, "\(hidden)")
        for name in hidden {
            let hourAgo = timespec(tv_sec: Int(Date().timeIntervalSince1970) - 3600, tv_nsec: 0)
            #expect(utimensat(AT_FDCWD, directory + "/" + name, [hourAgo, hourAgo], AT_SYMLINK_NOFOLLOW) == 0)
        }
        let again = fixture.log("again")
        let (outcome, _) = try Subprocess.run(
            Self.arguments(fixture, documents, into: directory),
            environment: fixture.environment,
            log: again
        )
        #expect(outcome.succeeded, "signing again failed: \(Subprocess.errors(again))")
        let left = try await Self.check(
            fixture,
            directory: directory,
            mustHaveAll: documents,
            context: "signed again after a kill before the syncfs"
        )
        #expect(left.rows == documents.count && left.orphans == 0 && left.hiddenTemporaries == 0, "\(left)")
    }
}

extension CrashFixture {
    /// Signs `documents` into `directory` killed at `point` (``KillPointTests/killOrFinish(at:_:fixture:seccomp:context:)``
    /// with `--seccomp-bpf` for the first occurrence), then checks what it left
    /// (``BatchCrashTests/check(_:directory:mustHaveAll:journal:context:)``): a run that finished must
    /// have a journal row for every document.
    func signKilled(
        _ documents: [String],
        at point: KillPoint,
        into directory: String,
        context: String
    ) async throws -> (outcome: Subprocess.Outcome, left: BatchCrashTests.Left) {
        let outcome = try KillPointTests.killOrFinish(
            at: point,
            BatchCrashTests.arguments(self, documents, into: directory),
            fixture: self,
            seccomp: true,
            context: context
        )
        let left = try await BatchCrashTests.check(
            self,
            directory: directory,
            mustHaveAll: outcome.succeeded ? documents : nil,
            context: context
        )
        return (outcome, left)
    }
}
