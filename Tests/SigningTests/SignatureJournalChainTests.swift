import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Signing
import TestSupport
import Testing

@testable import SignatureJournal

@Suite("SignatureJournal: the hash chain on SQLite (verify, tampering with sqlite3, removal entries, migration)")
struct SignatureJournalChainTests {
    static func record(_ name: String, at time: Date = Date()) -> SignatureRecord {
        SignatureJournalTests.record(name, at: time)
    }

    static func sqlite(_ path: String, _ sql: String) throws -> String { try SignatureJournalTests.sqlite(path, sql) }

    /// A journal of 20 signatures, one removed, one updated: 22 entries.
    static func makeJournal(_ directory: TemporaryDirectory) async throws -> (SignatureJournal, String) {
        let path = directory.path("journal.sqlite")
        let journal = try SignatureJournal(url: URL(fileURLWithPath: path))
        let records = (0..<20).map {
            Self.record("Документ №\($0).pdf", at: Date(timeIntervalSince1970: 1.7e9 + Double($0)))
        }
        try await journal.append(contentsOf: Array(records.prefix(10)))
        try await journal.append(contentsOf: Array(records.dropFirst(10)))
        #expect(try await journal.remove(id: records[3].id))
        var extended = records[5]
        extended.format = .cadesT
        try await journal.update(extended)
        return (journal, path)
    }

    @Test("Every entry chains to the one before; the head and Python's SHA-256 over the documented encoding agree")
    func chainMatchesDocumentedEncoding() async throws {
        let directory = try TemporaryDirectory(prefix: "journal-chain")
        let (journal, path) = try await Self.makeJournal(directory)
        let head = try await journal.verify()
        #expect(head.count == 22)
        #expect(try await journal.head() == head)
        #expect(try await journal.count() == 19)
        #expect(try Self.sqlite(path, "SELECT kind FROM journal_entries WHERE seq = 21") == "remove")
        #expect(try Self.sqlite(path, "SELECT kind FROM journal_entries WHERE seq = 22") == "update")
        #expect(try await journal.records().first { $0.documentName == "Документ №5.pdf" }?.format == .cadesT)
        #expect(try await journal.records().allSatisfy { $0.workerHost == SignatureRecord.currentHost })
        // Another implementation of "The hash chain" (DocC): Python's hashlib over sqlite3's rows.
        let script = """
            import hashlib, sqlite3, struct, sys
            db = sqlite3.connect(sys.argv[1])
            previous = bytes(32)
            def field(value):
                if value is None: return b'\\xff\\xff\\xff\\xff'
                return struct.pack('>I', len(value)) + value
            def text(value): return field(None if value is None else value.encode('utf-8'))
            def integer(value): return field(None if value is None else struct.pack('>q', value))
            for row in db.execute('SELECT * FROM journal_entries ORDER BY seq'):
                (seq, kind, id, created, provider, subject, fingerprint, name, size, digest, algorithm, fmt,
                 detached, path, signature, host, pid, prev, stored) = row
                encoding = (text('certsign-journal-entry-1') + integer(seq) + text(kind) + text(id)
                    + field(None if created is None else struct.pack('>d', created)) + text(provider) + text(subject)
                    + text(fingerprint) + text(name) + integer(size) + field(digest) + text(algorithm) + text(fmt)
                    + field(None if detached is None else bytes([detached])) + text(path) + field(signature)
                    + text(host) + integer(pid))
                assert prev == previous, seq
                previous = hashlib.sha256(previous + encoding).digest()
                assert previous == stored, seq
            print(db.execute('SELECT count FROM journal_head').fetchone()[0], previous.hex())
            """
        let python = try ExternalTool.run("python3", ["-c", script, path])
        #expect(python.succeeded, "\(python.errorOutput)")
        #expect(python.output.trimmingCharacters(in: .whitespacesAndNewlines) == "22 \(head.hashHex)")
    }

    @Test(
        "Tampering with sqlite3 fails verify naming the first changed, deleted or inserted row",
        arguments: [
            ("UPDATE journal_entries SET document_name = 'Подмена.pdf' WHERE seq = 7", "row 7", "was changed"),
            ("DELETE FROM journal_entries WHERE seq = 12", "row 12", "was deleted"),
            ("DELETE FROM journal_entries WHERE seq = 22", "row 22", "was deleted"),
            (
                "INSERT INTO journal_entries SELECT seq + 100, kind, id || 'x', created_at, provider_id, signer_subject, "
                    + "signer_fingerprint, document_name, document_size, document_digest, digest_algorithm, format, "
                    + "detached, signature_path, signature, host, pid, previous_hash, hash FROM journal_entries WHERE seq = 3",
                "row 103", "inserted"
            ),
            ("UPDATE journal_head SET count = 21", "row 22", "inserted"),
            ("DELETE FROM journal_current WHERE seq = 9", "of", "deleted"),
            ("UPDATE journal_entries SET hash = previous_hash WHERE seq = 4", "row 4", "was changed"),
        ]
    )
    func tampering(sql: String, row: String, finding: String) async throws {
        let directory = try TemporaryDirectory(prefix: "journal-tamper")
        let (journal, path) = try await Self.makeJournal(directory)
        _ = try await journal.verify()
        _ = try Self.sqlite(path, sql)
        do {
            let head = try await journal.verify()
            Issue.record("verify passed after '\(sql)': \(head)")
        } catch let error as CertificateProviderError {
            #expect(error.code == .storeCorrupted)
            #expect(error.reason.contains(row) && error.reason.contains(finding), "\(error.reason)")
        }
    }

    @Test("A published head proves the history before it; a change before it is found")
    func publishedHead() async throws {
        let directory = try TemporaryDirectory(prefix: "journal-published")
        let (journal, path) = try await Self.makeJournal(directory)
        let published = try await journal.head()
        try await journal.append(Self.record("позже.pdf"))
        #expect(try await journal.verify(expecting: published).count == published.count + 1)
        // Rewrite the whole chain consistently after row 2 (an attacker who knows the encoding):
        // only the published head tells.
        let rewritten = try SignatureJournal(url: URL(fileURLWithPath: directory.path("other.sqlite")))
        try await rewritten.append(contentsOf: (0..<23).map { Self.record("чужой \($0)") })
        await #expect(throws: CertificateProviderError(.storeCorrupted, "")) {
            try await rewritten.verify(expecting: published)
        }
        // The same history cut short below the published count: rows were deleted.
        _ = try Self.sqlite(
            path,
            "DELETE FROM journal_entries WHERE seq > 20; UPDATE journal_head SET count = 20, "
                + "hash = (SELECT hash FROM journal_entries WHERE seq = 20); DELETE FROM journal_current WHERE seq > 20"
        )
        await #expect(throws: CertificateProviderError(.storeCorrupted, "")) {
            try await journal.verify(expecting: published)
        }
    }

    @Test("A version-2 journal migrates to the chain over its rows in their order")
    func migrationFromVersionTwo() async throws {
        let directory = try TemporaryDirectory(prefix: "journal-v2")
        let path = directory.path("v2.sqlite")
        var sql = SignatureJournalTests.legacySchema(version: 2) + SignatureJournalTests.legacyIndexes
        for index in 0..<50 {
            sql += "INSERT INTO signatures VALUES ('id-\(index)', \(1_700_000_000 + (index * 7) % 50), 'pkcs12', "
            sql +=
                "'CN=Пётр', 'AB', 'Счёт \(index).pdf', \(index), x'0102', 'sha256', 'cades', 1, '/tmp/s\(index).p7s', NULL);\n"
        }
        _ = try Self.sqlite(path, sql)
        let journal = try SignatureJournal(url: URL(fileURLWithPath: path))
        let head = try await journal.verify()
        #expect(head.count == 50)
        #expect(try await journal.count() == 50)
        #expect(try Self.sqlite(path, "PRAGMA user_version") == "\(SignatureJournal.schemaVersion)")
        // The chain follows the old rows' order: creation time, then insertion.
        let order = try Self.sqlite(
            path,
            "SELECT group_concat(id, ',') FROM (SELECT id FROM journal_entries ORDER BY seq)"
        )
        let expected = (0..<50).sorted { ((($0 * 7) % 50), $0) < ((($1 * 7) % 50), $1) }.map { "id-\($0)" }
        #expect(order == expected.joined(separator: ","))
        #expect(try await journal.records().allSatisfy { $0.workerHost.isEmpty && $0.workerProcessID == 0 })
    }
}
