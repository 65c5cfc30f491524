import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import TestSupport
import Testing

/// The journal's queue from the command line, on an SQLite journal: `sign --no-wait --journal` and
/// `prepare --journal` queue, `pending list|show|cancel --journal` read and cancel, `worker` finishes
/// what was approved and marks what was declined, `pending resume` of a queued item finishes it once.
@Suite("certsign worker and pending --journal (CSC operationMode A, SQLite journal)")
struct CSCWorkerCommandTests {
    /// A store, a work directory with `count` documents, and the `--journal` of an SQLite file in it.
    func setUp(
        count: Int = 1
    ) throws -> (store: TemporaryDirectory, work: TemporaryDirectory, journal: String, [String]) {
        let (store, work) = (try TemporaryDirectory(), try TemporaryDirectory())
        let documents = try (0..<count).map { try work.write("plan-\($0).txt", text: "Бюджетный план \($0)\n") }
        return (store, work, "sqlite:" + work.path("journal.sqlite"), documents)
    }

    /// `sign --no-wait --journal` of `documents`: the pending IDs.
    func queueSignatures(
        _ url: URL,
        _ documents: [String],
        journal: String,
        store: TemporaryDirectory
    ) throws
        -> [String]
    {
        let result = try CLI.run(
            ["--journal", journal, "--json", "sign"] + documents
                + ["--provider", "csc", "--param", "operationMode=asynchronous", "--no-wait"]
                + workerProviderArguments(url),
            store: store,
            environment: workerEnvironment
        )
        try #require(result.succeeded, "\(result.errorOutput)")
        return ((try CLI.json(result)["waiting"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
    }

    func run(_ arguments: [String], _ store: TemporaryDirectory) throws -> ExternalTool.Result {
        try CLI.run(arguments, store: store, environment: workerEnvironment)
    }

    @Test("sign --no-wait --journal queues; worker --until-empty completes; the queue says completed; openssl verifies")
    func workerCompletes() async throws {
        try await withEmulator(.init(autoApproveAfter: 1)) { _, url in
            let (store, work, journal, documents) = try setUp(count: 3)
            defer { withExtendedLifetime(work) {} }
            let ids = try queueSignatures(url, documents, journal: journal, store: store)
            #expect(ids.count == 3)
            let listed = try CLI.json(try run(["--journal", journal, "--json", "pending", "list"], store))
            let items = listed["items"] as? [[String: Any]] ?? []
            #expect(items.map { $0["state"] as? String } == Array(repeating: "waitingForApproval", count: 3))
            #expect(Set(items.compactMap { $0["id"] as? String }) == Set(ids))
            let worker = try run(
                ["--journal", journal, "--json", "worker", "--until-empty", "--poll-interval", "1"]
                    + workerProviderArguments(url),
                store
            )
            #expect(worker.succeeded, "\(worker.errorOutput)")
            let summary = try CLI.json(worker)
            #expect(summary["completed"] as? Int == 3 && summary["stopped"] as? String == "empty")
            #expect(worker.errorOutput.contains("certsign: completed \(ids[0])"))
            for document in documents { try opensslVerify(signatureFile: document + ".p7s", contentFile: document) }
            let shown = try CLI.json(try run(["--journal", journal, "--json", "pending", "show", ids[0]], store))
            #expect(shown["state"] as? String == "completed" && shown["attempts"] as? Int != nil)
            let signatures = try run(["--journal", journal, "--json", "signatures", "list", "--local"], store)
            #expect((try CLI.json(signatures)["signatures"] as? [Any])?.count == 3, "\(signatures.output)")
            let again = try run(
                ["--journal", journal, "--json", "worker", "--until-empty"] + workerProviderArguments(url),
                store
            )
            #expect(try again.succeeded && (CLI.json(again)["completed"] as? Int) == 0)
            let cancel = try run(["--journal", journal, "pending", "cancel", ids[1]], store)
            #expect(cancel.status == 1 && cancel.errorOutput.contains("pending item \(ids[1]) was completed already"))
        }
    }

    @Test("a declined operation: the worker marks it declined, writes nothing; a cancelled item is never taken")
    func declinedAndCancelled() async throws {
        try await withEmulator { emulator, url in
            let (store, work, journal, documents) = try setUp(count: 2)
            defer { withExtendedLifetime(work) {} }
            let ids = try queueSignatures(url, documents, journal: journal, store: store)
            try #require(ids.count == 2)
            let shown = try CLI.json(try run(["--journal", journal, "--json", "pending", "show", ids[0]], store))
            try emulator.decline(operationID: try #require(shown["operationID"] as? String))
            let cancelled = try run(["--journal", journal, "--json", "pending", "cancel", ids[1]], store)
            #expect(try cancelled.succeeded && (CLI.json(cancelled)["state"] as? String) == "cancelled")
            let worker = try run(
                ["--journal", journal, "--json", "worker", "--until-empty"] + workerProviderArguments(url),
                store
            )
            #expect(worker.succeeded, "\(worker.errorOutput)")
            #expect(try CLI.json(worker)["declined"] as? Int == 1)
            #expect(worker.errorOutput.contains("was declined"), "\(worker.errorOutput)")
            for document in documents { #expect(!FileManager.default.fileExists(atPath: document + ".p7s")) }
            let first = try CLI.json(try run(["--journal", journal, "--json", "pending", "show", ids[0]], store))
            #expect(
                first["state"] as? String == "declined" && (first["lastError"] as? String)?.contains("declined") == true
            )
            let again = try run(["--journal", journal, "pending", "cancel", ids[1]], store)
            #expect(again.status == 1 && again.errorOutput.contains("pending item \(ids[1]) was cancelled"))
            let unknown = try run(["--journal", journal, "pending", "show", "ffff0000"], store)
            #expect(unknown.status == 1 && unknown.errorOutput.contains("no pending item with id ffff0000"))
        }
    }

    @Test("pending resume of a queued item completes it in the queue: no worker completes it again")
    func resumeQueued() async throws {
        try await withEmulator(.init(autoApproveAfter: 1)) { _, url in
            let (store, work, journal, documents) = try setUp()
            let id = try #require(try queueSignatures(url, documents, journal: journal, store: store).first)
            let resume = try run(
                ["--journal", journal, "pending", "resume", id, "--dir", work.url.path, "--wait-timeout", "30"]
                    + workerProviderArguments(url),
                store
            )
            #expect(resume.succeeded, "\(resume.errorOutput)")
            let shown = try CLI.json(try run(["--journal", journal, "--json", "pending", "show", id], store))
            #expect(shown["state"] as? String == "completed")
            let worker = try run(
                ["--journal", journal, "--json", "worker", "--until-empty"] + workerProviderArguments(url),
                store
            )
            #expect(try worker.succeeded && (CLI.json(worker)["completed"] as? Int) == 0, "\(worker.errorOutput)")
            let signatures = try run(["--journal", journal, "--json", "signatures", "list", "--local"], store)
            #expect((try CLI.json(signatures)["signatures"] as? [Any])?.count == 1)
        }
    }

    @Test("prepare --journal queues a prepared item; worker needs a journal; SIGTERM stops a worker with exit 0")
    func prepareRefusalAndSignal() async throws {
        let (store, work, journal, documents) = try setUp()
        // Preparing needs only a certificate (its public key): the emulator's CA certificate will do.
        let certificate = try work.write("signer.pem", text: sharedSeed.certificateAuthority.pemRepresentation)
        let prepared = try run(["--journal", journal, "prepare", documents[0], "--certificate", certificate], store)
        #expect(prepared.succeeded, "\(prepared.errorOutput)")
        let listed = try CLI.json(try run(["--journal", journal, "--json", "pending", "list"], store))
        #expect((listed["items"] as? [[String: Any]])?.first?["state"] as? String == "prepared")
        let refused = try run(["worker", "--until-empty"], store)
        #expect(refused.status == 1 && refused.errorOutput.contains("certsign worker needs the journal"))
        let worker = try BackgroundCertsign(
            ["--journal", journal, "--json", "worker", "--poll-interval", "1"],
            environment: ["CERTSIGN_HOME": store.url.path],
            in: work,
            name: "worker"
        )
        // A signal before the worker took SIGTERM would end it (143) or, in the instant its handler is
        // set up, be lost: it says when it listens.
        let deadline = Date().addingTimeInterval(120)
        while !worker.errorText.contains("waiting for approved items"), Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(worker.errorText.contains("waiting for approved items"), "\(worker.errorText)")
        kill(worker.pid, SIGTERM)
        #expect(await worker.wait() == 0, "\(worker.errorText)")
        let summary = try JSONSerialization.jsonObject(with: Data(worker.outputText.utf8)) as? [String: Any]
        #expect(summary?["stopped"] as? String == "signal" && summary?["completed"] as? Int == 0)
    }
}
