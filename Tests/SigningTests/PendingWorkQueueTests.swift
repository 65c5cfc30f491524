import CertificateProviders
import Foundation
import SignatureJournalPostgres
import TestSupport
import Testing

@testable import SignatureJournal

/// The journal's queue of pending work on both backends: states, refusals naming the item, claims
/// whose records commit with the outcome or not at all, SKIP LOCKED between connections, and the
/// migration of a journal file written before the queue existed.
@Suite("SignatureJournal: the queue of pending work (SQLite and PostgreSQL)", .serialized)
struct PendingWorkQueueTests {
    enum Backend: String, CaseIterable, CustomStringConvertible {
        case sqlite, postgreSQL
        var description: String { rawValue }
    }

    /// A journal of `backend` (with what keeps it alive), empty.
    static func journal(_ backend: Backend) throws -> (SignatureJournal, AnyObject) {
        switch backend {
        case .sqlite:
            let directory = try TemporaryDirectory(prefix: "pending-queue")
            return (try SignatureJournal(url: URL(fileURLWithPath: directory.path("journal.sqlite"))), directory)
        case .postgreSQL:
            let cluster = try PostgresCluster()
            return (try SignatureJournalPostgresTests.open(cluster), cluster)
        }
    }

    static func item(_ id: String, _ state: PendingWorkState = .waitingForApproval) -> PendingWorkItem {
        PendingWorkItem(id: id, state: state, payload: Data("{\"id\":\"\(id)\"}".utf8), outputPath: "/tmp/\(id).p7s")
    }

    /// A record at a time the stores keep exactly (a `Date()` may lose its last bits in a REAL).
    static func record(_ name: String) -> SignatureRecord {
        SignatureJournalTests.record(name, at: Date(timeIntervalSince1970: 1_700_000_000.125))
    }

    static func code(_ body: () async throws -> Void) async -> (CertificateProviderError.Code?, String) {
        do {
            try await body()
            return (nil, "")
        } catch let error as CertificateProviderError {
            return (error.code, error.reason)
        } catch {
            return (nil, "\(error)")
        }
    }

    @Test(
        "States and refusals: complete once, cancel once, unknown IDs, duplicates, closed items",
        arguments: Backend.allCases
    )
    func lifecycle(_ backend: Backend) async throws {
        let (journal, keep) = try Self.journal(backend)
        defer { withExtendedLifetime(keep) {} }
        try await journal.enqueuePendingWork([Self.item("a"), Self.item("b"), Self.item("c", .prepared)])
        #expect(try await journal.pendingWork().map(\.id) == ["a", "b", "c"])
        #expect(try await journal.pendingWork(in: [.prepared]).map(\.id) == ["c"])
        #expect(try await journal.pendingWorkItem(id: "a")?.payload == Data("{\"id\":\"a\"}".utf8))
        var (code, reason) = await Self.code { try await journal.enqueuePendingWork([Self.item("d"), Self.item("a")]) }
        #expect(code == .alreadyExists && reason.contains("a"))
        #expect(try await journal.pendingWorkItem(id: "d") == nil)

        let record = Self.record("a.txt")
        let completed = try await journal.completePendingWork(id: "a", recording: [record])
        #expect(completed.state == .completed)
        #expect(try await journal.record(id: record.id) == record)
        (code, reason) = await Self.code {
            try await journal.completePendingWork(id: "a", recording: [Self.record("again")])
        }
        #expect(code == .pendingWorkCompleted && reason.contains("pending item a"))
        #expect(try await journal.count() == 1)
        (code, _) = await Self.code { try await journal.cancelPendingWork(id: "a") }
        #expect(code == .pendingWorkCompleted)

        #expect(try await journal.cancelPendingWork(id: "b").state == .cancelled)
        (code, reason) = await Self.code { try await journal.cancelPendingWork(id: "b") }
        #expect(code == .pendingWorkCancelled && reason.contains("pending item b"))
        (code, reason) = await Self.code {
            try await journal.completePendingWork(id: "b", recording: [Self.record("b.txt")])
        }
        #expect(code == .pendingWorkCancelled && reason.contains("pending item b"))
        (code, reason) = await Self.code { try await journal.cancelPendingWork(id: "nope") }
        #expect(code == .notStored && reason.contains("nope"))
        (code, reason) = await Self.code {
            try await journal.completePendingWork(id: "nope", recording: [Self.record("x")])
        }
        #expect(code == .notStored && reason.contains("nope"))
        #expect(try await journal.count() == 1)
        #expect(try await journal.pendingWork(in: [.completed, .cancelled]).map(\.state) == [.completed, .cancelled])
        _ = try await journal.verify()
    }

    @Test(
        "A claim: waiting counts an attempt and waits its turn, a throwing worker rolls its record back, declined and expired are final",
        arguments: Backend.allCases
    )
    func claims(_ backend: Backend) async throws {
        let (journal, keep) = try Self.journal(backend)
        defer { withExtendedLifetime(keep) {} }
        try await journal.enqueuePendingWork([Self.item("w1"), Self.item("w2"), Self.item("p", .prepared)])
        let waited = try await journal.claimPendingWork { _ in .waiting(retryAfter: .seconds(3600)) }
        #expect(waited?.id == "w1" && waited?.attempts == 1 && waited?.state == .waitingForApproval)
        // w1 is not due for an hour and prepared items are not taken: w2 is next, then nothing.
        struct Boom: Error {}
        let record = Self.record("w2.txt")
        await #expect(throws: Boom.self) {
            _ = try await journal.claimPendingWork { claim in
                #expect(claim.item.id == "w2")
                try await claim.journal.append(record)
                throw Boom()
            }
        }
        #expect(try await journal.record(id: record.id) == nil)
        #expect(try await journal.pendingWorkItem(id: "w2")?.state == .waitingForApproval)
        let declined = try await journal.claimPendingWork { claim in
            #expect(claim.item.id == "w2")
            return .declined(reason: "operation op-2 was declined")
        }
        #expect(declined?.state == .declined)
        #expect(try await journal.claimPendingWork { _ in .completed } == nil)
        var (code, reason) = await Self.code {
            try await journal.completePendingWork(id: "w2", recording: [record])
        }
        #expect(code == .pendingWorkClosed && reason.contains("w2") && reason.contains("declined"))
        let expired = try await journal.claimPendingWork(id: "w1") { _ in .expired(reason: "gone") }
        #expect(expired?.state == .expired && expired?.lastError == "gone")
        (code, _) = await Self.code { _ = try await journal.claimPendingWork(id: "p") { _ in .completed } }
        #expect(code == .invalidParameter)
        let finished = try await journal.claimPendingWork(id: "p", in: [.prepared]) { claim in
            try await claim.journal.append(record)
            return .completed
        }
        #expect(finished?.state == .completed)
        #expect(try await journal.record(id: record.id) == record)
        #expect(try await journal.pendingWork(in: [.prepared, .waitingForApproval]).isEmpty)
        _ = try await journal.verify()
    }

    @Test("PostgreSQL: a held item is skipped by another connection's claim (FOR UPDATE SKIP LOCKED)")
    func skipLocked() async throws {
        let cluster = try PostgresCluster()
        let first = try SignatureJournalPostgresTests.open(cluster)
        let second = try SignatureJournalPostgresTests.open(cluster)
        try await first.enqueuePendingWork([Self.item("one"), Self.item("two")])
        let (held, holding) = AsyncStream.makeStream(of: String.self)
        let (release, releasing) = AsyncStream.makeStream(of: Void.self)
        async let firstClaim = first.claimPendingWork { claim in
            holding.yield(claim.item.id)
            for await _ in release { break }
            return .completed
        }
        var heldID = ""
        for await id in held {
            heldID = id
            break
        }
        let secondClaim = try await second.claimPendingWork { _ in .completed }
        #expect(heldID == "one")
        #expect(secondClaim?.id == "two")
        #expect(try await second.claimPendingWork { _ in .completed } == nil)
        releasing.yield()
        #expect(try await firstClaim?.state == .completed)
        #expect(try await second.pendingWork(in: [.completed]).map(\.id) == ["one", "two"])
    }

    @Test("A journal file written before the queue (schema 3) gets the queue on open, its records intact")
    func migration() async throws {
        let directory = try TemporaryDirectory(prefix: "pending-queue")
        let path = directory.path("v3.sqlite")
        let record = Self.record("Бюджет.xlsx")
        do {
            let journal = try SignatureJournal(url: URL(fileURLWithPath: path))
            try await journal.append(record)
        }
        // What version 3 had: no queue table, user_version 3.
        _ = try SignatureJournalTests.sqlite(
            path,
            "DROP TABLE journal_pending; PRAGMA user_version = 3;"
        )
        let journal = try SignatureJournal(url: URL(fileURLWithPath: path))
        #expect(try SignatureJournalTests.sqlite(path, "PRAGMA user_version") == "\(SignatureJournal.schemaVersion)")
        #expect(try await journal.records() == [record])
        try await journal.enqueuePendingWork([Self.item("after-migration")])
        #expect(try await journal.pendingWork().map(\.id) == ["after-migration"])
        _ = try await journal.verify()
    }
}
