import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

@testable import SignatureJournal
@testable import Signing

@Suite("SignatureJournal: SQLite, WAL, schema versions, foreign files, several processes")
struct SignatureJournalTests {
    static func record(
        _ name: String,
        storage: SignatureRecord.Storage = .inline([1, 2, 3]),
        at time: Date = Date()
    ) -> SignatureRecord {
        SignatureRecord(
            createdAt: time,
            providerID: "pkcs12",
            signerSubject: "CN=Иванов Иван,O=ООО Ромашка",
            signerFingerprint: "AB:CD",
            documentName: name,
            documentSize: 42,
            documentDigest: DigestAlgorithm.sha256.hash(Array(name.utf8)),
            digestAlgorithm: .sha256,
            format: .cadesBES,
            isDetached: true,
            storage: storage
        )
    }

    /// The header and the `signatures` table of a journal as version `version` (1 or 2) of this package
    /// wrote it; version 2 also made the indexes ``legacyIndexes``.
    static func legacySchema(version: Int) -> String {
        """
        PRAGMA application_id = \(SignatureJournal.applicationID); PRAGMA user_version = \(version);
        CREATE TABLE signatures (id TEXT PRIMARY KEY NOT NULL, created_at REAL NOT NULL, provider_id TEXT NOT NULL,
          signer_subject TEXT NOT NULL, signer_fingerprint TEXT NOT NULL, document_name TEXT NOT NULL,
          document_size INTEGER NOT NULL, document_digest BLOB NOT NULL, digest_algorithm TEXT NOT NULL, format TEXT NOT NULL,
          detached INTEGER NOT NULL, signature_path TEXT, signature BLOB,
          CHECK (signature_path IS NOT NULL OR signature IS NOT NULL));

        """
    }

    /// The indexes version 2 added to the `signatures` table.
    static let legacyIndexes = """
        CREATE INDEX signatures_by_time ON signatures (created_at);
        CREATE INDEX signatures_by_provider ON signatures (provider_id, created_at);

        """

    static func sqlite(_ path: String, _ sql: String) throws -> String {
        let result = try ExternalTool.run("sqlite3", [path, sql])
        try #require(result.succeeded, "\(result.errorOutput)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("Records round-trip with Cyrillic names, both storages, newest first; remove and duplicates")
    func roundTrip() async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        let url = URL(fileURLWithPath: directory.path("journal.sqlite"))
        let journal = try SignatureJournal(url: url)
        let older = Self.record("ПланированиеБюджета — Номер 1.pdf", at: Date(timeIntervalSince1970: 1_700_000_000))
        let newer = Self.record(
            "Договор №5.docx",
            storage: .file(URL(fileURLWithPath: "/tmp/Подпись.p7s")),
            at: Date(timeIntervalSince1970: 1_700_000_100)
        )
        try await journal.append(older)
        try await journal.append(newer)
        #expect(try await journal.records() == [newer, older])
        #expect(try await journal.record(id: older.id) == older)
        await #expect(throws: CertificateProviderError(.alreadyExists, "")) { try await journal.append(older) }
        #expect(try await journal.count() == 2)
        #expect(try await journal.remove(id: older.id))
        #expect(try await !journal.remove(id: older.id))
        #expect(try await journal.records() == [newer])

        // Reopened from disk, with the marks that make it ours; readable by the sqlite3 tool.
        let reopened = try SignatureJournal(url: url)
        #expect(try await reopened.records() == [newer])
        try await reopened.checkIntegrity()
        #expect(try Self.sqlite(url.path, "PRAGMA journal_mode") == "wal")
        #expect(try Self.sqlite(url.path, "PRAGMA user_version") == "\(SignatureJournal.schemaVersion)")
        #expect(try Self.sqlite(url.path, "PRAGMA application_id") == "\(SignatureJournal.applicationID)")
        #expect(try Self.sqlite(url.path, "SELECT document_name FROM signatures") == "Договор №5.docx")

        // An empty name is stored as empty text (the column is NOT NULL), not refused or read as NULL.
        let unnamed = Self.record("", at: Date(timeIntervalSince1970: 1_700_000_200))
        try await reopened.append(unnamed)
        #expect(try await reopened.record(id: unnamed.id) == unnamed)
        #expect(try Self.sqlite(url.path, "SELECT count(*) FROM signatures WHERE document_name = ''") == "1")
    }

    @Test(
        "A second journal on the same file in one process keeps the first one's locks: another process never deletes the WAL under it"
    )
    func twoJournalsOneProcess() async throws {
        let directory = try TemporaryDirectory(prefix: "journal-locks")
        let url = URL(fileURLWithPath: directory.path("journal.sqlite"))
        let first = try SignatureJournal(url: url)
        try await first.append(Self.record("первый.pdf"))
        // Opening a second journal must not drop the first connection's POSIX locks (closing any
        // descriptor of the file would): the sqlite3 process below would then find the database
        // unused on exit, checkpoint it and delete the WAL both journals still write to.
        let second = try SignatureJournal(url: url)
        #expect(try Self.sqlite(url.path, "SELECT count(*) FROM signatures") == "1")
        #expect(FileManager.default.fileExists(atPath: url.path + "-wal"), "the WAL of open journals was deleted")
        try await first.append(Self.record("второй.pdf"))
        try await second.append(Self.record("третий.pdf"))
        // Every commit is visible to another process, and survives both journals closing.
        #expect(try Self.sqlite(url.path, "SELECT count(*) FROM signatures") == "3")
        #expect(try await first.count() == 3)
        #expect(try await second.count() == 3)
    }

    @Test(
        "The WAL is checkpointed by the journal's own thread while it stays open, stays bounded, and sqlite3 sees every row"
    )
    func backgroundCheckpoints() async throws {
        let directory = try TemporaryDirectory(prefix: "journal-checkpoint")
        let path = directory.path("journal.sqlite")
        // A threshold of 64 pages instead of 4000, so that a test-sized journal crosses it often.
        let journal = try SignatureJournal(url: URL(fileURLWithPath: path), checkpointThreshold: 64)
        let pageBytes = 4096 + 24
        var largestWAL = 0
        for group in 0..<60 {
            // About one page per record: 60 groups of 20 make about 19 times the threshold.
            let records = (0..<20).map { index in
                Self.record("документ \(group)-\(index)", storage: .inline(Array(repeating: UInt8(index), count: 3000)))
            }
            try await journal.append(contentsOf: records)
            let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            largestWAL = max(largestWAL, size)
        }
        // The commits only asked; the journal's thread checkpointed (poll: it runs beside us).
        let deadline = Date().addingTimeInterval(30)
        while await journal.backgroundCheckpoints == 0 && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(await journal.backgroundCheckpoints > 0)
        // Never more than four times the threshold (where the writer checkpoints itself) and a group.
        #expect(largestWAL <= (4 * 64 + 2 * 20 + 8) * pageBytes + 32, "the WAL grew to \(largestWAL) bytes")
        // Checkpointed pages are in the database file itself, with the journal still open.
        let databaseSize = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(databaseSize > 64 * 4096, "database file \(databaseSize) bytes")
        #expect(try Self.sqlite(path, "SELECT count(*) FROM signatures") == "1200")
        #expect(try await journal.count() == 1200)
        #expect(try Self.sqlite(path, "PRAGMA integrity_check") == "ok")
    }

    @Test("append(contentsOf:) is all or nothing")
    func appendMany() async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        let journal = try SignatureJournal(url: URL(fileURLWithPath: directory.path("journal.sqlite")))
        let first = Self.record("один")
        let second = Self.record("два")
        try await journal.append(contentsOf: [first, second])
        #expect(try await journal.count() == 2)
        await #expect(throws: CertificateProviderError(.alreadyExists, "")) {
            try await journal.append(contentsOf: [Self.record("три"), first])
        }
        #expect(try await journal.count() == 2)
    }

    @Test("A damaged journal is reported as storeCorrupted, not read as empty")
    func damaged() async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        let url = URL(fileURLWithPath: directory.path("journal.sqlite"))
        do {
            let journal = try SignatureJournal(url: url)
            try await journal.append(
                contentsOf: (0..<60).map {
                    Self.record("запись \($0)", storage: .inline([UInt8](repeating: UInt8($0), count: 2048)))
                }
            )
        }
        // The last connection closed: everything is checkpointed into the main file.
        var bytes = try directory.read("journal.sqlite")
        try #require(bytes.count > 8 * 4096)
        for index in (2 * 4096)..<(6 * 4096) { bytes[index] = UInt8(truncatingIfNeeded: index &* 37) }
        try directory.write("journal.sqlite", bytes)
        do {
            let journal = try SignatureJournal(url: url)
            _ = try await journal.records()
            try await journal.checkIntegrity()
            Issue.record("the damage was not detected")
        } catch let error as CertificateProviderError {
            #expect(error.code == .storeCorrupted, "\(error)")
        }
    }

    @Test("A file that is not SQLite is storeCorrupted and left untouched", arguments: ["garbage", "short", "zip"])
    func notSQLite(kind: String) throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        let bytes: [UInt8]
        switch kind {
        case "short": bytes = Array("hello".utf8)
        case "zip": bytes = [0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 7, count: 5000)
        default: bytes = (0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        }
        let path = try directory.write("journal.sqlite", bytes)
        #expect(throws: CertificateProviderError(.storeCorrupted, "")) {
            _ = try SignatureJournal(url: URL(fileURLWithPath: path))
        }
        #expect(try directory.read("journal.sqlite") == bytes)
    }

    @Test("Another application's SQLite database and a newer schema are storeCorrupted and left untouched")
    func foreign() throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        let foreign = directory.path("foreign.sqlite")
        _ = try Self.sqlite(foreign, "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('keep me');")
        let before = try directory.read("foreign.sqlite")
        do {
            _ = try SignatureJournal(url: URL(fileURLWithPath: foreign))
            Issue.record("a foreign database was opened")
        } catch let error as CertificateProviderError {
            #expect(error.code == .storeCorrupted)
            #expect(error.reason.contains("another application"))
        }
        #expect(try directory.read("foreign.sqlite") == before)
        #expect(try Self.sqlite(foreign, "SELECT text FROM notes") == "keep me")

        let otherID = directory.path("other-id.sqlite")
        _ = try Self.sqlite(otherID, "PRAGMA application_id = 1234; CREATE TABLE t (x);")
        #expect(throws: CertificateProviderError(.storeCorrupted, "")) {
            _ = try SignatureJournal(url: URL(fileURLWithPath: otherID))
        }

        let newer = directory.path("newer.sqlite")
        _ = try Self.sqlite(
            newer,
            "PRAGMA application_id = \(SignatureJournal.applicationID); PRAGMA user_version = 99; CREATE TABLE signatures (id TEXT);"
        )
        do {
            _ = try SignatureJournal(url: URL(fileURLWithPath: newer))
            Issue.record("a newer journal was opened")
        } catch let error as CertificateProviderError {
            #expect(error.code == .storeCorrupted)
            #expect(error.reason.contains("newer"))
        }
        #expect(try Self.sqlite(newer, "PRAGMA user_version") == "99")
    }

    @Test("A version-1 journal is migrated to the current schema with its rows intact")
    func migration() async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        let path = directory.path("v1.sqlite")
        // The schema as version 1 of this package wrote it.
        _ = try Self.sqlite(
            path,
            Self.legacySchema(version: 1)
                + "INSERT INTO signatures VALUES ('old-1', 1700000000, 'fmp-dss', 'CN=Леонид', '01', 'Бюджет.xlsx', 10, "
                + "x'00', 'sha256', 'cades', 1, NULL, x'3000');"
        )
        let journal = try SignatureJournal(url: URL(fileURLWithPath: path))
        let records = try await journal.records()
        #expect(records.map(\.id) == ["old-1"])
        #expect(records.first?.documentName == "Бюджет.xlsx")
        #expect(records.first?.storage == .inline([0x30, 0x00]))
        #expect(try Self.sqlite(path, "PRAGMA user_version") == "\(SignatureJournal.schemaVersion)")
        #expect(
            try Self.sqlite(
                path,
                "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'signatures_by_%'"
            ) == "2"
        )
    }

    @Test(
        "Record IDs are UUIDs (version 8): unique, clock-ordered first 8 digits that still tell records apart, Python reads them"
    )
    func recordIDs() throws {
        let before = Date().timeIntervalSince1970
        let ids = (0..<20_000).map { _ in SignatureRecord.newID() }
        let after = Date().timeIntervalSince1970
        #expect(Set(ids).count == ids.count)
        var heads: [UInt32] = []
        for id in ids {
            let uuid = try #require(UUID(uuidString: id)).uuid
            #expect(uuid.6 >> 4 == 8, "version nibble of \(id)")
            #expect(uuid.8 >> 6 == 0b10, "variant bits of \(id)")
            #expect(id == id.uppercased() && id.count == 36)
            heads.append(try #require(UInt32(id.prefix(8), radix: 16)))
        }
        // The first 32 bits follow the clock (microseconds modulo 2^32) and grow from one ID to the
        // next, so a batch's rows land on adjacent pages of the journal's ID index.
        let cycle = 4_294_967_296.0
        let low = UInt32(((before * 1e6).rounded(.down)).truncatingRemainder(dividingBy: cycle))
        let steps = heads.indices.dropFirst().map { heads[$0] &- heads[$0 - 1] }
        #expect(steps.allSatisfy { $0 >= 1 && $0 < 10_000_000 }, "the heads must increase")
        #expect(heads[0] &- low < UInt32((after - before) * 1e6 + 1_000_000), "the first head follows the clock")
        // `signatures remove 0F1C3A52` takes a prefix: the 8 digits alone name each of these records.
        #expect(Set(ids.map { $0.prefix(8) }).count == ids.count)
        // The other 90 bits are random: no two IDs share their last 12 digits.
        #expect(Set(ids.map { $0.suffix(12) }).count == ids.count)
        // Another implementation's view of the same strings.
        let script =
            "import sys, uuid\nfor line in sys.stdin:\n    assert uuid.UUID(line.strip()).version == 8, line\nprint('ok')"
        let python = try ExternalTool.run(
            "python3",
            ["-c", script],
            input: Data(ids.prefix(200).joined(separator: "\n").utf8)
        )
        #expect(python.succeeded && python.output.contains("ok"), "\(python.errorOutput)")
    }

    @Test("4 processes × 200 signatures at once give exactly 800 rows")
    func multiProcess() async throws {
        let tool = try #require(JournalStressTool.path, "journal-stress is not built; run swift build --build-tests")
        let directory = try TemporaryDirectory(prefix: "journal-stress")
        let path = directory.path("journal.sqlite")
        let processes = try (0..<4).map { index in
            try JournalStressTool.start(tool, ["insert", path, "200", "P\(index)"])
        }
        for process in processes {
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
        let journal = try SignatureJournal(url: URL(fileURLWithPath: path))
        let records = try await journal.records()
        #expect(records.count == 800)
        #expect(Set(records.map(\.id)).count == 800)
        #expect(Set(records.map(\.documentName)).count == 800)
        try await journal.checkIntegrity()
    }

    @Test("A process killed (SIGKILL) while signing leaves a valid journal and no partial .p7s")
    func killed() async throws {
        let tool = try #require(JournalStressTool.path, "journal-stress is not built; run swift build --build-tests")
        let directory = try TemporaryDirectory(prefix: "journal-kill")
        let path = directory.path("journal.sqlite")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["sign-loop", path, directory.url.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        let line = output.fileHandleForReading.availableData
        try #require(String(decoding: line, as: UTF8.self).hasPrefix("ready"), "the signing process did not start")
        try await Task.sleep(for: .milliseconds(300))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)

        let journal = try SignatureJournal(url: URL(fileURLWithPath: path))
        try await journal.checkIntegrity()
        let records = try await journal.records()
        // The loop signed documents 0, 1, 2, … in order, one journal transaction each: the rows are
        // exactly the first N of them (no gap, no duplicate, no half-written row), N ≥ 1 after "ready".
        let signed = records.count
        #expect(
            Set(records.map(\.documentName)) == Set((0..<signed).map { "Документ \($0)" }),
            "\(signed) rows, not documents 0..<\(signed): \(records.prefix(5).map(\.documentName)) …"
        )
        // Each row points at the file its signature was written to (signature-<index mod 8>.p7s).
        let misplaced = records.filter { record in
            guard case .file(let url) = record.storage,
                let index = Int(record.documentName.dropFirst("Документ ".count))
            else { return true }
            return url.path != directory.path("signature-\(index % 8).p7s")
        }
        #expect(misplaced.isEmpty, "\(misplaced.count) of \(signed) rows name another file: \(misplaced.prefix(3))")
        try await journal.append(Self.record("после сбоя"))
        #expect(try await journal.count() == records.count + 1)
        // Every .p7s under its final name is complete and verifies.
        let document = [UInt8](repeating: 0x5A, count: 256 << 10)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.hasSuffix(".p7s") && !$0.hasPrefix(".")
        }
        // The file is written before its row: the kill may fall between the two, so one more file
        // than rows may exist, never fewer (and never more than the loop's eight names).
        #expect(files.count == min(signed, 8) || files.count == min(signed + 1, 8), "\(signed) rows, files \(files)")
        for file in files {
            let signature = try directory.read(file)
            let result = CMSVerifier.verify(signature: signature, content: document, trustAnchors: [])
            #expect(result.isValid, "\(file): \(result)")
        }
    }
}

/// Finds the journal-stress executable next to the test bundle.
enum JournalStressTool {
    static var path: String? { ExternalTool.builtProduct("journal-stress") }

    /// Starts `tool arguments` with `environment` added, its errors on the test's stderr.
    static func start(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardError = FileHandle.standardError
        try process.run()
        return process
    }
}
