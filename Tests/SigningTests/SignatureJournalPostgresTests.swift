import CertificateProviders
import CertificateProvidersTesting
import Foundation
import SignatureJournalPostgres
import Signing
import TestSupport
import Testing

@testable import SignatureJournal

/// The journal on a private PostgreSQL cluster (``PostgresCluster``): the same records, chain and
/// verification as on SQLite, many writers at once, first use by several workers, refusals.
@Suite("SignatureJournal: PostgreSQL backend (private cluster)", .serialized)
struct SignatureJournalPostgresTests {
    static func open(
        _ cluster: PostgresCluster,
        database: String = "journal",
        role: String? = nil
    ) throws
        -> SignatureJournal
    {
        PostgresCluster.useProcessPassFile()
        return try SignatureJournal(opening: JournalLocation(parsing: cluster.uri(database: database, role: role)))
    }

    @Test("Records round-trip (Cyrillic, both storages), remove and update append entries, the chain verifies")
    func roundTrip() async throws {
        let cluster = try PostgresCluster()
        let journal = try Self.open(cluster)
        let older = SignatureJournalTests.record(
            "План «Бюджет» №1.pdf",
            at: Date(timeIntervalSince1970: 1_700_000_000.125)
        )
        let newer = SignatureJournalTests.record(
            "Договор.docx",
            storage: .file(URL(fileURLWithPath: "/tmp/Подпись.p7s")),
            at: Date(timeIntervalSince1970: 1_700_000_100)
        )
        let empty = SignatureJournalTests.record(
            "",
            storage: .inline([]),
            at: Date(timeIntervalSince1970: 1_600_000_000)
        )
        try await journal.append(contentsOf: [older, newer, empty])
        #expect(try await journal.records() == [newer, older, empty])
        #expect(try await journal.record(id: older.id) == older)
        await #expect(throws: CertificateProviderError(.alreadyExists, "")) { try await journal.append(older) }
        #expect(try await journal.remove(id: older.id))
        #expect(try await !journal.remove(id: older.id))
        var extended = newer
        extended.format = .cadesT
        try await journal.update(extended)
        #expect(try await journal.records() == [extended, empty])
        let head = try await journal.verify()
        #expect(head.count == 5)
        #expect(try cluster.psql("SELECT count(*) FROM journal_entries") == "5")
        #expect(
            try cluster.psql("SELECT document_name FROM signatures ORDER BY created_at DESC LIMIT 1") == "Договор.docx"
        )
        // The same entries give the same hashes on SQLite: one encoding for both backends.
        let directory = try TemporaryDirectory(prefix: "journal-pg-copy")
        let copy = try SignatureJournal(url: URL(fileURLWithPath: directory.path("copy.sqlite")))
        try await copy.append(contentsOf: [older, newer, empty])
        _ = try await copy.remove(id: older.id)
        try await copy.update(extended)
        #expect(try await copy.head() == head)
        // Tampering with psql: an UPDATE, then a DELETE, then an INSERT, each found.
        try cluster.psql("UPDATE journal_entries SET document_name = 'Подмена' WHERE seq = 2")
        await #expect(throws: CertificateProviderError(.storeCorrupted, "")) { try await journal.verify() }
    }

    @Test("Six workers start at once on an empty database: the schema is made once, none fails, 600 rows")
    func concurrentFirstUse() async throws {
        let tool = try #require(JournalStressTool.path, "journal-stress is not built; run swift build --build-tests")
        let cluster = try PostgresCluster()
        let processes = try (0..<6).map { index in
            try JournalStressTool.start(
                tool,
                ["insert", cluster.uri(), "100", "W\(index)"],
                environment: cluster.environment
            )
        }
        for process in processes {
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
        #expect(try cluster.psql("SELECT count(*) FROM certsign_journal_schema") == "1")
        let journal = try Self.open(cluster)
        let records = try await journal.records()
        #expect(records.count == 600)
        #expect(Set(records.map(\.id)).count == 600)
        #expect(Set(records.map(\.workerProcessID)).count == 6)
        #expect(try await journal.verify().count == 600)
    }

    @Test("Refusals: a password in the URI, a newer schema, a missing database, a wrong password, no server")
    func refusals() async throws {
        let cluster = try PostgresCluster()
        for uri in [
            "postgresql://signer:\(cluster.password)@127.0.0.1:\(cluster.port)/journal",
            "postgresql://signer@127.0.0.1:\(cluster.port)/journal?password=\(cluster.password)",
        ] {
            do {
                _ = try JournalLocation(parsing: uri)
                Issue.record("a URI with a password was taken")
            } catch let error as CertificateProviderError {
                #expect(error.code == .invalidParameter)
                #expect(!error.reason.contains(cluster.password) && error.reason.contains("PGPASSWORD"))
            }
        }
        try cluster.psql("CREATE DATABASE newer OWNER signer", database: "postgres")
        try cluster.psql(
            "SET ROLE signer; CREATE TABLE certsign_journal_schema (version INT NOT NULL); "
                + "INSERT INTO certsign_journal_schema VALUES (99)",
            database: "newer"
        )
        #expect(throws: CertificateProviderError(.storeCorrupted, "")) { _ = try Self.open(cluster, database: "newer") }
        #expect(throws: CertificateProviderError(.invalidParameter, "")) {
            _ = try Self.open(cluster, database: "missing")
        }
        try cluster.psql("CREATE ROLE intruder LOGIN PASSWORD 'right-one'", database: "postgres")
        try cluster.addPassword(role: "intruder", password: "wrong-one")
        #expect(throws: CertificateProviderError(.authenticationFailed, "")) {
            _ = try Self.open(cluster, role: "intruder")
        }
        let closed = try PostgresCluster.freePort()
        PostgresCluster.useProcessPassFile()
        #expect(throws: CertificateProviderError(.network, "")) {
            _ = try SignatureJournal(opening: .postgreSQL("postgresql://signer@127.0.0.1:\(closed)/journal"))
        }
    }
}
