import CertificateProviders
import CertificateProvidersTesting
import Foundation
import SignatureJournal
import Signing
import TestSupport
import Testing

@Suite("SignatureJournal in memory: inMemory(), ':memory:' and the testing product's coordinator")
struct InMemoryJournalTests {
    @Test("inMemory() keeps the chain in memory: records, update, remove, verify; two journals are apart")
    func inMemory() async throws {
        let journal = try SignatureJournal.inMemory()
        #expect(journal.isInMemory)
        let records = (0..<3).map { SignatureJournalTests.record("Документ \($0).pdf") }
        try await journal.append(contentsOf: records)
        #expect(try await journal.remove(id: records[1].id))
        var updated = records[2]
        updated.format = .cadesT
        try await journal.update(updated)
        #expect(try await journal.count() == 2)
        #expect(try await journal.verify().count == 5)
        #expect(try await journal.record(id: records[2].id)?.format == .cadesT)
        #expect(try await SignatureJournal.inMemory().count() == 0)
    }

    @Test("a URL named ':memory:' opens a journal in memory and creates no file of that name")
    func memoryURL() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent(":memory:")
        let journal = try SignatureJournal(url: url)
        try await journal.append(SignatureJournalTests.record("Договор.pdf"))
        #expect(journal.isInMemory)
        #expect(try await journal.count() == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
        let parsed = try SignatureJournal(location: JournalLocation(parsing: "sqlite:\(url.path)"))
        #expect(parsed.isInMemory)
        #expect(try await parsed.count() == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
        #expect(!(try SignatureJournal(url: directory.url.appendingPathComponent("j.sqlite")).isInMemory))
    }

    @Test("SigningCoordinator.makeForTesting signs with the given double and records in a journal in memory")
    func testingCoordinator() async throws {
        let pki = try TestPKI()
        let signer = try pki.issueLeaf(subject: "CN=In-Memory Signer", keyType: .p256)
        let provider = InMemoryCertificateProvider(id: .pkcs12, identity: signer)
        let coordinator = try SigningCoordinator.makeForTesting(providers: [provider])
        let content = Array("Акт приёмки\n".utf8)
        let result = try await coordinator.sign(document: .bytes(content, name: "act.txt"), provider: .pkcs12)
        #expect(result.signerCertificate == signer.certificate)
        #expect(coordinator.journal.isInMemory)
        #expect(try await coordinator.journal.records().map(\.id) == [result.record.id])
        let verified = CMSVerifier.verify(
            signature: result.signature,
            content: content,
            trustAnchors: [pki.root.certificate]
        )
        #expect(verified.isValid, "\(verified)")
    }
}
