import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import Signing
import TestSupport
import Testing

/// `kill -9` of real `certsign` processes during identity import, signing (with the journal write)
/// and export, and many processes signing against one store at once. An operation counts as done
/// only when its process exited 0 before the kill; afterwards it must be there, nothing may be
/// half-written under a final name, and every command must still work on the store.
@Suite(.serialized) struct CrashSafetyTests {
    /// Kill runs per operation (100 in all).
    static let importKills = 34, signKills = 33, exportKills = 33
    /// Documents per killed `certsign sign` call.
    static let documentsPerSign = 3

    /// A kill delay for run `run` of an operation that takes about `time` seconds (the longest of its
    /// last five runs that ended by themselves, so the estimate follows the machine's load): even runs
    /// anywhere from early start-up to just past the end, odd runs in the last quarter, where the
    /// files are written.
    static func delay(_ time: Double, _ run: Int, _ random: inout SplitMix64) -> Double {
        time
            * (run.isMultiple(of: 2)
                ? Double.random(in: 0.3...1.05, using: &random) : Double.random(in: 0.75...1.05, using: &random))
    }

    /// The random kills of one operation (import, sign or export): the times of its runs that ended by
    /// themselves, which aim the next kill, and how many kills landed.
    struct RandomKills {
        let operation: String
        /// The median of the calibration runs: the first estimate, reported.
        let estimate: Double
        var times: [Double]
        var landed = 0
        let environment: [String: String]
        let context: Comment

        /// Runs the calibration `runs` (``CrashSafetyTests/completedRuns(_:fixture:)``) first.
        init(
            _ operation: String,
            calibrating runs: [(name: String, arguments: [String])],
            fixture: CrashFixture,
            context: Comment
        ) throws {
            self.operation = operation
            times = try CrashSafetyTests.completedRuns(runs, fixture: fixture)
            estimate = CrashFixture.median(times)
            environment = fixture.environment
            self.context = context
        }

        /// Runs `arguments` (logged to `log`) and kills it after ``CrashSafetyTests/delay(_:_:_:)`` of the
        /// slowest of the last five runs that ended by themselves; a run that failed without a kill is an issue.
        /// - Returns: how the process ended.
        mutating func run(
            _ arguments: [String],
            number run: Int,
            log: String,
            random: inout SplitMix64
        ) throws -> Subprocess.Outcome {
            let delay = CrashSafetyTests.delay(times.suffix(5).max() ?? estimate, run, &random)
            let (outcome, finishedIn) = try Subprocess.runKilled(
                after: delay,
                arguments,
                environment: environment,
                log: log
            )
            if let finishedIn { times.append(finishedIn) }
            switch outcome {
            case .exited(0): break
            case .signaled: landed += 1
            case .exited:
                Issue.record("\(operation) failed without a kill: \(outcome) \(Subprocess.errors(log)); \(context)")
            }
            return outcome
        }
    }

    /// Runs each command (a log name and certsign's arguments) to completion, as a calibration before
    /// the kills; their times in seconds. A failure ends the test.
    static func completedRuns(_ runs: [(name: String, arguments: [String])], fixture: CrashFixture) throws -> [Double] {
        try runs.map { run in
            let log = fixture.log(run.name)
            let (outcome, time) = try Subprocess.run(run.arguments, environment: fixture.environment, log: log)
            try #require(outcome.succeeded, "\(run.name): \(outcome) \(Subprocess.errors(log))")
            return time
        }
    }

    @Test func killedCommandsLeaveAWorkingStore() async throws {
        let fixture = try CrashFixture(keyType: .p256)
        let seed = UInt64(Date().timeIntervalSince1970 * 1000)
        var random = SplitMix64(seed: seed)
        let context = Comment(rawValue: "random seed \(seed)")

        // MARK: Import
        var imported: Set<String> = ["signer", "replaced", "calibration"]
        let importCalibration = imported.sorted().map { ("import-\($0)", fixture.importArguments(alias: $0)) }
        var imports = try RandomKills("import", calibrating: importCalibration, fixture: fixture, context: context)
        var importInsideWrite = 0
        for run in 0..<Self.importKills {
            // Every fourth run replaces an entry that an earlier import reported: it must never vanish.
            let replace = run % 4 == 3
            let alias = replace ? "replaced" : "k\(run)"
            let log = fixture.log("import-\(alias)")
            let arguments = fixture.importArguments(alias: alias, replace: replace)
            let outcome = try imports.run(arguments, number: run, log: log, random: &random)
            if outcome == .exited(0) { imported.insert(alias) }
            if CrashFixture.names(in: fixture.identitiesDirectory).hidden.contains(where: {
                $0.hasPrefix(".tmp-") || $0.hasPrefix(".replaced-")
            }) {
                importInsideWrite += 1
            }
            try fixture.checkIdentities(mustHave: imported, open: alias, context: "\(context)")
        }

        // MARK: Sign (each call signs several documents, one journal row each)
        var signed: [String] = []
        var attempted: [String] = []
        func makeDocuments(_ run: String) throws -> [String] {
            let documents = try (0..<Self.documentsPerSign).map {
                try fixture.work.write("s\(run)-\($0).txt", text: "Документ \(run)/\($0)\n")
            }
            attempted += documents
            return documents
        }
        let signCalibration = try ["cal0", "cal1"].map { run in
            let documents = try makeDocuments(run)
            signed += documents
            return ("sign-\(run)", fixture.signArguments(documents))
        }
        var signs = try RandomKills("sign", calibrating: signCalibration, fixture: fixture, context: context)
        var signInsideWrite = 0
        for run in 0..<Self.signKills {
            let documents = try makeDocuments("\(run)")
            let log = fixture.log("sign-\(run)")
            let outcome = try signs.run(fixture.signArguments(documents), number: run, log: log, random: &random)
            if outcome == .exited(0) { signed += documents }
            // Killed inside a write (a temporary .p7s left) or after some signatures of the batch were made.
            if outcome != .exited(0),
                CrashFixture.names(in: fixture.work.url.path).hidden.contains(where: { $0.hasPrefix(".s\(run)-") })
                    || documents.contains(where: { FileManager.default.fileExists(atPath: $0 + ".p7s") })
            {
                signInsideWrite += 1
            }
            try await fixture.checkJournal(mustHave: signed, context: "\(context)")
        }

        // MARK: Export
        var exported = ["cal0", "cal1"].map { fixture.work.path("e-\($0).p12") }
        let exportCalibration = exported.map {
            ("export-\(URL(fileURLWithPath: $0).lastPathComponent)", fixture.exportArguments(to: $0))
        }
        var exports = try RandomKills("export", calibrating: exportCalibration, fixture: fixture, context: context)
        var exportInsideWrite = 0
        var exportTargets: [String] = exported
        for run in 0..<Self.exportKills {
            let path = fixture.work.path("e\(run).p12")
            exportTargets.append(path)
            let log = fixture.log("export-\(run)")
            let outcome = try exports.run(fixture.exportArguments(to: path), number: run, log: log, random: &random)
            if outcome == .exited(0) { exported.append(path) }
            if CrashFixture.names(in: fixture.work.url.path).hidden.contains(where: {
                $0.hasPrefix(".e\(run).p12.tmp-")
            }) {
                exportInsideWrite += 1
            }
            // Whatever exists under the final name is a complete file.
            if FileManager.default.fileExists(atPath: path) {
                let bytes = try fixture.work.read("e\(run).p12")
                #expect(throws: Never.self, "export \(path) (\(outcome)) is not a complete PKCS#12 file; \(context)") {
                    _ = try PKCS12File(data: bytes, password: Secret(fixture.password)).identity()
                }
            }
        }

        // MARK: Afterwards: every reported success is there, openable by openssl, and certsign still works.
        for path in exportTargets where FileManager.default.fileExists(atPath: path) {
            #expect(try fixture.opensslOpens(path), "openssl cannot open \(path); \(context)")
        }
        for path in exported {
            #expect(FileManager.default.fileExists(atPath: path), "export \(path) reported success but is missing")
        }

        for document in attempted where FileManager.default.fileExists(atPath: document + ".p7s") {
            let result = try await fixture.verify(document + ".p7s", over: document)
            #expect(
                result.isValid,
                "\(document).p7s exists under its final name but does not verify: \(result); \(context)"
            )
        }
        for document in signed {
            #expect(
                try fixture.opensslVerifies(document + ".p7s", content: document),
                "openssl rejects \(document).p7s; \(context)"
            )
        }

        let list = try fixture.certsign(["--json", "identity", "list"])
        #expect(list.status == 0, "identity list after the kills: \(list.errorOutput)")
        let listed = Set(
            try #require(try CrashFixture.json(list)["identities"] as? [[String: Any]]).compactMap {
                $0["alias"] as? String
            }
        )
        #expect(
            imported.isSubset(of: listed),
            "reported imports missing from 'identity list': \(imported.subtracting(listed)); \(context)"
        )
        #expect(
            listed == Set(CrashFixture.names(in: fixture.identitiesDirectory).visible),
            "'identity list' hides a broken entry"
        )

        // Sign with an entry a killed import may have left (complete or absent, never broken), else the replaced one.
        let alias = listed.subtracting(imported).sorted().first ?? "replaced"
        let final = try fixture.work.write("final.txt", text: "после сбоев\n")
        let signFinal = try fixture.certsign(fixture.signArguments([final], identity: alias))
        #expect(signFinal.status == 0, "sign with '\(alias)' after the kills: \(signFinal.errorOutput)")
        let verifyFinal = try fixture.certsign(["verify", final + ".p7s", "--ca", fixture.rootPath])
        #expect(verifyFinal.status == 0, "verify after the kills: \(verifyFinal.output) \(verifyFinal.errorOutput)")
        #expect(try fixture.opensslVerifies(final + ".p7s", content: final))

        let signatures = try fixture.certsign(["--json", "signatures", "list"])
        #expect(signatures.status == 0, "signatures list after the kills: \(signatures.errorOutput)")
        let rows = try #require(try CrashFixture.json(signatures)["signatures"] as? [[String: Any]])
        let files = rows.compactMap { $0["signatureFile"] as? String }
        #expect(Set(rows.compactMap { $0["id"] as? String }).count == rows.count, "duplicate journal ids")
        #expect(
            Set(signed + [final]).map { $0 + ".p7s" }.allSatisfy(Set(files).contains),
            "reported signatures missing from the journal; \(context)"
        )

        // A kill between a signature's file and its journal row leaves a complete, valid .p7s without
        // a row (never a row without its file): counted for the report.
        let orphans = attempted.filter {
            FileManager.default.fileExists(atPath: $0 + ".p7s") && !files.contains($0 + ".p7s")
        }.count

        // The next change cleans up what the kills left in the store; export still works.
        let after = try fixture.certsign(fixture.importArguments(alias: "after"))
        #expect(after.status == 0, "import after the kills: \(after.errorOutput)")
        #expect(
            CrashFixture.names(in: fixture.identitiesDirectory).hidden == [".lock"],
            "leftovers survived the next change"
        )
        let exportFinal = fixture.work.path("final.p12")
        let exportAfter = try fixture.certsign(fixture.exportArguments(alias: "replaced", to: exportFinal))
        #expect(exportAfter.status == 0, "export after the kills: \(exportAfter.errorOutput)")
        #expect(try fixture.opensslOpens(exportFinal))

        // Kills must have landed for the suite to mean anything (random delays span the measured run time).
        #expect(imports.landed > 0 && signs.landed > 0 && exports.landed > 0, "no kill landed; \(context)")
        let report = """
            crash-safety: \(seed) seed; import \(String(format: "%.0f", imports.estimate * 1000)) ms, \(imports.landed)/\(Self.importKills) killed \
            (\(importInsideWrite) mid-write); sign \(String(format: "%.0f", signs.estimate * 1000)) ms, \(signs.landed)/\(Self.signKills) killed \
            (\(signInsideWrite) mid-write), \(signed.count)/\(attempted.count) documents reported signed, \(rows.count - 1) journal rows, \(orphans) .p7s without a row; \
            export \(String(format: "%.0f", exports.estimate * 1000)) ms, \(exports.landed)/\(Self.exportKills) killed (\(exportInsideWrite) mid-write)
            """
        try fixture.work.write("report.txt", text: report)
        if let path = ProcessInfo.processInfo.environment["CRASH_SAFETY_REPORT"] {
            try? report.write(toFile: path, atomically: true, encoding: .utf8)
        }
    }

    @Test func eightProcessesSignOneHundredDocumentsEach() async throws {
        let fixture = try CrashFixture(keyType: .rsa2048)
        let environment = fixture.environment
        let log = fixture.log("import")
        let (imported, _) = try Subprocess.run(
            fixture.importArguments(alias: "signer"),
            environment: environment,
            log: log
        )
        try #require(imported.succeeded, "import: \(Subprocess.errors(log))")

        let processes = 8
        let documentsEach = 100
        var batches: [[String]] = []
        for process in 0..<processes {
            let directory = fixture.work.url.appendingPathComponent("p\(process)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            batches.append(
                try (0..<documentsEach).map { number in
                    let path = directory.appendingPathComponent("d\(number).txt").path
                    try Data("процесс \(process), документ \(number)\n".utf8).write(to: URL(fileURLWithPath: path))
                    return path
                }
            )
        }
        let logs = (0..<processes).map { fixture.log("sign-\($0)") }
        let pids = try batches.indices.map {
            try Subprocess.start(fixture.signArguments(batches[$0]), environment: environment, log: logs[$0])
        }
        let outcomes = pids.map(Subprocess.wait)
        for (index, outcome) in outcomes.enumerated() {
            #expect(outcome.succeeded, "process \(index): \(outcome) \(Subprocess.errors(logs[index]))")
            let output = try Data(contentsOf: URL(fileURLWithPath: logs[index] + ".out"))
            let json = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
            #expect(json["signed"] as? Int == documentsEach && json["failed"] as? Int == 0, "process \(index): \(json)")
        }

        let list = try fixture.certsign(["--json", "signatures", "list"])
        #expect(list.status == 0, "\(list.errorOutput)")
        let rows = try #require(try CrashFixture.json(list)["signatures"] as? [[String: Any]])
        #expect(rows.count == processes * documentsEach)
        #expect(Set(rows.compactMap { $0["id"] as? String }).count == rows.count, "duplicate journal ids")
        let expected = Set(batches.joined().map { $0 + ".p7s" })
        #expect(Set(rows.compactMap { $0["signatureFile"] as? String }) == expected)

        // Every signature verifies (in-process, same code as `certsign verify`); a sample with openssl and certsign.
        for document in batches.joined() {
            let result = try await fixture.verify(document + ".p7s", over: document)
            #expect(result.isValid, "\(document).p7s: \(result)")
        }
        for (process, batch) in batches.enumerated() {
            let document = batch[(process * 37) % documentsEach]
            #expect(
                try fixture.opensslVerifies(document + ".p7s", content: document),
                "openssl rejects \(document).p7s"
            )
        }
        let verified = try fixture.certsign(["verify", batches[7][99] + ".p7s", "--ca", fixture.rootPath])
        #expect(verified.status == 0, "\(verified.output) \(verified.errorOutput)")
    }

    /// The first use of a store by many processes at once: each opens (and one creates) the journal.
    /// This once failed with "an SQLite database of another application" (ownership read outside one
    /// snapshot) and "stayed locked" (switching to WAL does not wait for the lock).
    @Test func sixteenProcessesCreateTheJournalAtOnce() throws {
        let work = try TemporaryDirectory(prefix: "certsign-journal-race")
        for round in 0..<10 {
            let store = work.url.appendingPathComponent("store\(round)").path
            let logs = (0..<16).map { work.path("round\(round)-\($0)") }
            let pids = try logs.map {
                try Subprocess.start(["--json", "signatures", "list"], environment: ["CERTSIGN_HOME": store], log: $0)
            }
            for (index, outcome) in pids.map(Subprocess.wait).enumerated() {
                #expect(
                    outcome.succeeded,
                    "round \(round), process \(index): \(outcome) \(Subprocess.errors(logs[index]))"
                )
            }
        }
    }
}
