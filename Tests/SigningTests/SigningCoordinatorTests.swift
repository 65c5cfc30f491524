import CertificateProviders
import CertificateProvidersTesting
import Foundation
import SignatureJournal
import Signing
import Synchronization
import TestSupport
import Testing

/// A provider whose "server" builds the whole signature (as CryptoPro DSS does), here with
/// CMSSigner and a real key; it records the requests it got.
final class ServerSigningProvider: DocumentSigning {
    /// What the "server" does wrong, if anything.
    enum Misbehaviour: Sendable {
        case none
        /// Answers bytes that are no signature.
        case garbage
        /// Signs with another identity than the one it reports as selected.
        case otherSigner(SigningIdentity)
        /// Builds another format than asked.
        case format(SignatureFormat)
        /// Uses another digest than asked.
        case digest(DigestAlgorithm)
        /// Embeds the content although a detached signature was asked for.
        case attached
    }

    let providerID: ProviderID = "test.server-signing"
    private let identity: SigningIdentity
    private let misbehaviour: Misbehaviour
    private let requests = Mutex<[DocumentSigningRequest]>([])

    init(identity: SigningIdentity, returnsGarbage: Bool = false, misbehaviour: Misbehaviour = .none) {
        self.identity = identity
        self.misbehaviour = returnsGarbage ? .garbage : misbehaviour
    }

    var received: [DocumentSigningRequest] { requests.withLock { $0 } }

    func initialize(options: ProviderParameters) async throws -> SigningIdentity { identity }
    func storedCertificate() throws -> SigningIdentity? { identity }

    func signDocument(_ request: DocumentSigningRequest) async throws -> [UInt8] {
        requests.withLock { $0.append(request) }
        var signer = identity
        var format = request.format
        var digestAlgorithm = request.digestAlgorithm  // content payloads only: a digest payload fixes its algorithm
        var isDetached = request.isDetached
        switch misbehaviour {
        case .none: break
        case .garbage: return [0x30, 0x03, 0x02, 0x01, 0x00]
        case .otherSigner(let other): signer = other
        case .format(let other): format = other
        case .digest(let other): digestAlgorithm = other
        case .attached: isDetached = false
        }
        switch request.payload {
        case .content(let bytes):
            return try await CMSSigner.sign(
                content: bytes,
                identity: signer,
                format: format,
                detached: isDetached,
                digestAlgorithm: digestAlgorithm
            )
        case .digest(let digest, let algorithm):
            return try await CMSSigner.sign(
                digest: digest,
                identity: signer,
                format: format,
                digestAlgorithm: algorithm
            )
        }
    }
}

@Suite("SigningCoordinator: providers, journal, files, progress, cancellation, history")
struct SigningCoordinatorTests {
    let fixture: Fixture
    let directory: TemporaryDirectory
    init() throws {
        fixture = try Fixture(sharedBy: .signingSuites)
        directory = try TemporaryDirectory(prefix: "coordinator")
    }

    static let content = Array("ПланированиеБюджета, Номер 1".utf8)

    func makeCoordinator(_ register: (inout ProviderRegistry) throws -> Void) throws -> SigningCoordinator {
        var registry = ProviderRegistry()
        try register(&registry)
        let journal = try SignatureJournal(
            url: URL(fileURLWithPath: directory.path("journal-\(UUID().uuidString).sqlite"))
        )
        return SigningCoordinator(registry: registry, journal: journal)
    }

    /// A file of `size` pseudo-random bytes.
    func makeFile(_ name: String, size: Int) throws -> URL {
        var bytes = [UInt8](repeating: 0, count: size)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: (index &* 2_654_435_761) >> 13) }
        return URL(fileURLWithPath: try directory.write(name, bytes))
    }

    @Test(
        "Bytes are signed with the stored identity, recorded, and verify with openssl; batch signing initializes once"
    )
    func signBytes() async throws {
        let provider = InMemoryCertificateProvider(id: .pkcs12, identity: fixture.rsa)
        let coordinator = try makeCoordinator { registry in
            try registry.register(.pkcs12, description: "in-memory") { provider }
        }
        var results: [SigningResult] = []
        for index in 0..<5 {
            results.append(
                try await coordinator.sign(
                    document: .bytes(Self.content + [UInt8(index)], name: "Бюджет \(index).txt"),
                    provider: .pkcs12
                )
            )
        }
        #expect(provider.initializeCount == 1)
        let first = try #require(results.first)
        #expect(first.signerCertificate == fixture.rsa.certificate)
        #expect(first.record.documentName == "Бюджет 0.txt")
        #expect(first.record.documentSize == Int64(Self.content.count + 1))
        #expect(first.record.documentDigest == DigestAlgorithm.sha256.hash(Self.content + [0]))
        #expect(first.record.signerFingerprint == fixture.rsa.certificate.sha256FingerprintHex)
        #expect(first.record.storage == .inline(first.signature))
        let tool = try OpenSSLCLI.verify(
            signature: first.signature,
            content: Self.content + [0],
            detached: true,
            root: fixture.pki.root.certificate,
            cades: true
        )
        #expect(tool.succeeded, "\(tool.errorOutput)")
        let records = try await Self.journal(of: coordinator).records()
        #expect(Set(records.map(\.id)) == Set(results.map(\.record.id)))
    }

    /// The journal read from synchronous code: `journal` is nonisolated, so an app
    /// reaches it without `await`; this does not compile while it is actor-isolated.
    static func journal(of coordinator: SigningCoordinator) -> SignatureJournal { coordinator.journal }

    @Test(
        "Options reach the signature: CMS, attached, SHA-512, signing time; external keys work through the coordinator"
    )
    func options() async throws {
        let external = try Fixture.external(fixture.ec)
        let coordinator = try makeCoordinator { registry in
            try registry.register("test.remote-key", description: "remote") {
                InMemoryCertificateProvider(id: "test.remote-key", identity: external)
            }
        }
        let time = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 3600).rounded(.down))
        let options = SigningOptions(format: .cms, isDetached: false, digestAlgorithm: .sha512, signingTime: time)
        let result = try await coordinator.sign(
            document: .bytes(Self.content, name: "a"),
            provider: "test.remote-key",
            options: options
        )
        let verified = try await coordinator.verify(
            signature: result.signature,
            content: nil,
            trust: [fixture.pki.root.certificate]
        )
        #expect(verified.isValid, "\(verified)")
        #expect(verified.format == .cms)
        #expect(!verified.isDetached)
        #expect(verified.digestAlgorithm == .sha512)
        #expect(verified.signingTime == time)
        #expect(verified.embeddedContent == Self.content)
        let tool = try OpenSSLCLI.verify(
            signature: result.signature,
            content: Self.content,
            detached: false,
            root: fixture.pki.root.certificate,
            cades: false
        )
        #expect(tool.succeeded, "\(tool.errorOutput)")
    }

    @Test(
        "Identity resolution: stored first, initialize when none or unsupported, other errors surface and nothing is recorded"
    )
    func identityResolution() async throws {
        let unsupported = ScriptedCertificateProvider(id: "test.a", identity: fixture.ec)
        unsupported.script(.storedCertificate, .fail(.unsupportedOperation("no store")))
        let broken = ScriptedCertificateProvider(id: "test.b", identity: fixture.ec)
        broken.script(.storedCertificate, .fail(CertificateProviderError(.storeCorrupted, "damaged")))
        let offline = ScriptedCertificateProvider(id: "test.c", identity: fixture.ec)
        offline.script(.initialize, .fail(CertificateProviderError(.network, "offline")))
        let coordinator = try makeCoordinator { registry in
            try registry.register("test.a", description: "") { unsupported }
            try registry.register("test.b", description: "") { broken }
            try registry.register("test.c", description: "") { offline }
        }
        _ = try await coordinator.sign(document: .bytes(Self.content, name: "x"), provider: "test.a")
        _ = try await coordinator.sign(document: .bytes(Self.content, name: "y"), provider: "test.a")
        #expect(unsupported.calls == [.storedCertificate, .initialize])
        await #expect(throws: CertificateProviderError(.storeCorrupted, "")) {
            _ = try await coordinator.sign(document: .bytes(Self.content, name: "z"), provider: "test.b")
        }
        await #expect(throws: CertificateProviderError(.network, "")) {
            _ = try await coordinator.sign(document: .bytes(Self.content, name: "z"), provider: "test.c")
        }
        await #expect(throws: CertificateProviderError(.providerNotFound, "")) {
            _ = try await coordinator.sign(document: .bytes(Self.content, name: "z"), provider: "test.missing")
        }
        #expect(try await coordinator.journal.count() == 2)
    }

    @Test("A file is streamed in chunks with progress, and the .p7s verifies with openssl; attached files too")
    func signFile() async throws {
        let coordinator = try makeCoordinator { registry in
            try registry.register(.pkcs12, description: "") {
                InMemoryCertificateProvider(id: .pkcs12, identity: fixture.rsa, storedFromStart: true)
            }
        }
        let size = 3 << 20 + 12345
        let file = try makeFile("Отчёт.bin", size: size)
        let progress = Mutex<[(Int64, Int64)]>([])
        let output = URL(fileURLWithPath: directory.path("Отчёт.bin.p7s"))
        let result = try await coordinator.sign(
            document: .file(file),
            provider: .pkcs12,
            options: SigningOptions(digestAlgorithm: .sha384, chunkSize: 256 << 10),
            output: output
        ) { done, total in
            progress.withLock { $0.append((done, total)) }
        }
        let calls = progress.withLock { $0 }
        #expect(calls.count == (size + (256 << 10) - 1) / (256 << 10))
        #expect(calls.allSatisfy { $0.1 == Int64(size) })
        #expect(zip(calls, calls.dropFirst()).allSatisfy { $0.0 < $1.0 })
        #expect(calls.last?.0 == Int64(size))
        #expect(result.record.documentName == "Отчёт.bin")
        #expect(result.record.documentSize == Int64(size))
        #expect(result.record.storage == .file(output))
        #expect(try directory.read("Отчёт.bin.p7s") == result.signature)
        let tool = try OpenSSLCMS.verify(
            signatureFile: output.path,
            contentFile: file.path,
            caFile: try directory.write("root.pem", text: fixture.pki.root.certificate.pemRepresentation),
            cades: true
        )
        #expect(tool.succeeded, "\(tool.errorOutput)")
        let verified = try await coordinator.verify(
            signature: result.signature,
            content: .file(file),
            trust: [fixture.pki.root.certificate]
        )
        #expect(verified.isValid)

        let attached = try await coordinator.sign(
            document: .file(file),
            provider: .pkcs12,
            options: SigningOptions(isDetached: false)
        )
        let attachedCheck = try OpenSSLCLI.verify(
            signature: attached.signature,
            content: try Array(Data(contentsOf: file)),
            detached: false,
            root: fixture.pki.root.certificate,
            cades: true
        )
        #expect(attachedCheck.succeeded, "\(attachedCheck.errorOutput)")
    }

    @Test("An attached signature of a file over the limit is refused before reading it")
    func attachedLimit() async throws {
        let coordinator = try makeCoordinator { registry in
            try registry.register(.pkcs12, description: "") {
                InMemoryCertificateProvider(id: .pkcs12, identity: fixture.ec, storedFromStart: true)
            }
        }
        let path = directory.path("sparse.bin")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(CMSSigner.attachedFileSizeLimit + 1))
        try handle.close()
        await #expect(throws: CertificateProviderError(.invalidParameter, "")) {
            _ = try await coordinator.sign(
                document: .file(URL(fileURLWithPath: path)),
                provider: .pkcs12,
                options: SigningOptions(isDetached: false)
            )
        }
    }

    @Test("Cancellation stops between chunks and leaves no .p7s, no temporary file and no journal row")
    func cancellation() async throws {
        let coordinator = try makeCoordinator { registry in
            try registry.register(.pkcs12, description: "") {
                InMemoryCertificateProvider(id: .pkcs12, identity: fixture.ec, storedFromStart: true)
            }
        }
        let file = try makeFile("big.bin", size: 4 << 20)
        let output = URL(fileURLWithPath: directory.path("big.bin.p7s"))
        let chunks = Mutex(0)
        let task = Task {
            try await coordinator.sign(
                document: .file(file),
                provider: .pkcs12,
                options: SigningOptions(chunkSize: 64 << 10),
                output: output
            ) { _, _ in
                chunks.withLock { $0 += 1 }
                withUnsafeCurrentTask { $0?.cancel() }
            }
        }
        await #expect(throws: CertificateProviderError(.cancelled, "")) { _ = try await task.value }
        #expect(chunks.withLock { $0 } == 1)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.contains(".p7s")
        }
        #expect(left.isEmpty)
        #expect(try await coordinator.journal.count() == 0)
    }

    @Test("A missing output directory fails with fileSystem and records nothing")
    func outputFailure() async throws {
        let coordinator = try makeCoordinator { registry in
            try registry.register(.pkcs12, description: "") {
                InMemoryCertificateProvider(id: .pkcs12, identity: fixture.ec, storedFromStart: true)
            }
        }
        await #expect(throws: CertificateProviderError(.fileSystem, "")) {
            _ = try await coordinator.sign(
                document: .bytes(Self.content, name: "x"),
                provider: .pkcs12,
                output: URL(fileURLWithPath: directory.path("no/such/dir/x.p7s"))
            )
        }
        #expect(try await coordinator.journal.count() == 0)
    }

    @Test("DocumentSigning providers get the document (or a file's digest) and their signature is recorded")
    func documentSigning() async throws {
        let server = ServerSigningProvider(identity: fixture.rsa)
        let coordinator = try makeCoordinator { registry in
            try registry.register(server.providerID, description: "") { server }
        }
        let bytes = try await coordinator.sign(document: .bytes(Self.content, name: "b"), provider: server.providerID)
        let file = try makeFile("doc.bin", size: 100_000)
        let streamed = try await coordinator.sign(
            document: .file(file),
            provider: server.providerID,
            options: SigningOptions(format: .cms, digestAlgorithm: .sha384)
        )
        let requests = server.received
        #expect(requests.count == 2)
        if case .content(let sent) = requests.first?.payload {
            #expect(sent == Self.content)
        } else {
            Issue.record("bytes were not sent as content")
        }
        if case .digest(let digest, let algorithm) = requests.last?.payload {
            #expect(algorithm == .sha384)
            #expect(digest == DigestAlgorithm.sha384.hash(try directory.read("doc.bin")))
        } else {
            Issue.record("a detached file was not sent as a digest")
        }
        #expect(requests.last?.format == .cms)
        #expect(bytes.signerCertificate == fixture.rsa.certificate)
        let tool = try OpenSSLCLI.verify(
            signature: streamed.signature,
            content: try directory.read("doc.bin"),
            detached: true,
            root: fixture.pki.root.certificate,
            cades: false
        )
        #expect(tool.succeeded, "\(tool.errorOutput)")
        #expect(try await coordinator.journal.count() == 2)
    }

    @Test("A DocumentSigning provider returning a signature that does not verify is serverRejected")
    func documentSigningGarbage() async throws {
        let coordinator = try makeCoordinator { registry in
            try registry.register("test.server-signing", description: "") {
                ServerSigningProvider(identity: fixture.rsa, returnsGarbage: true)
            }
        }
        await #expect(throws: CertificateProviderError(.serverRejected, "")) {
            _ = try await coordinator.sign(document: .bytes(Self.content, name: "b"), provider: "test.server-signing")
        }
        #expect(try await coordinator.journal.count() == 0)
    }

    @Test(
        "Finding 7: a DocumentSigning result with another signer, format, digest or detached-ness is serverSignatureMismatch; nothing written or recorded"
    )
    func documentSigningMismatch() async throws {
        let stranger = try TestPKI(rootSubject: "CN=Server's Other CA").issueLeaf(
            subject: "CN=Not The Selected One",
            keyType: .p256
        )
        // The same name from another CA: what a server that re-issued the certificate signs with.
        let reissued = try TestPKI(rootSubject: "CN=Server's New CA").issueLeaf(
            subject: "CN=Иванов Иван,O=ООО Ромашка",
            keyType: .p256
        )
        let cases: [(ServerSigningProvider.Misbehaviour, String)] = [
            (.otherSigner(stranger), "not by the selected certificate"), (.otherSigner(fixture.ec), "CN=EC Signer"),
            (.otherSigner(reissued), "(same subject: the server re-issued it)"),
            (.format(.cms), "format is cms"), (.digest(.sha512), "digest is sha512"),
            (.attached, "embeds the document"),
        ]
        for (misbehaviour, words) in cases {
            let server = ServerSigningProvider(identity: fixture.rsa, misbehaviour: misbehaviour)
            let coordinator = try makeCoordinator { registry in
                try registry.register(server.providerID, description: "") { server }
            }
            let output = URL(fileURLWithPath: directory.path("mismatch-\(UUID().uuidString).p7s"))
            do {
                _ = try await coordinator.sign(
                    document: .bytes(Self.content, name: "b"),
                    provider: server.providerID,
                    output: output
                )
                Issue.record("\(misbehaviour): the signature was accepted")
            } catch let error as CertificateProviderError {
                #expect(error.code == .serverSignatureMismatch, "\(misbehaviour): \(error)")
                #expect(error.reason.contains(words), "\(error.reason)")
            }
            #expect(!FileManager.default.fileExists(atPath: output.path))
            #expect(try await coordinator.journal.count() == 0)
            // A detached file goes up as its digest; the answer is checked the same way.
            switch misbehaviour {
            case .otherSigner, .format: break
            default: continue
            }
            let file = try makeFile("mismatch.bin", size: 10_000)
            await #expect(throws: CertificateProviderError(.serverSignatureMismatch, "")) {
                _ = try await coordinator.sign(document: .file(file), provider: server.providerID)
            }
            #expect(try await coordinator.journal.count() == 0)
        }
    }

    @Test("signatures() merges the journal with server histories, each saying where it lives; removal goes there")
    func history() async throws {
        let remote = ScriptedCertificateProvider(
            id: .fmpDSS,
            identity: fixture.ec,
            history: [
                RemoteSignatureRecord(
                    id: "121",
                    createdAt: Date(timeIntervalSince1970: 1_000),
                    certificateID: "12831",
                    summary: "GetBudgetPlanning / ПланированиеБюджета / Номер / 1"
                )
            ]
        )
        let failing = ScriptedCertificateProvider(id: "test.down", identity: fixture.ec)
        failing.script(.signatures, .fail(CertificateProviderError(.network, "server down")))
        let coordinator = try makeCoordinator { registry in
            try registry.register(.pkcs12, description: "") {
                InMemoryCertificateProvider(id: .pkcs12, identity: fixture.ec, storedFromStart: true)
            }
            try registry.register(.fmpDSS, description: "") { remote }
            try registry.register("test.down", description: "") { failing }
        }
        let local = try await coordinator.sign(document: .bytes(Self.content, name: "Локальный"), provider: .pkcs12)
        let list = try await coordinator.signatures()
        #expect(list.entries.map(\.location) == [.journal, .server(.fmpDSS)])
        #expect(list.entries.first?.id == local.record.id)
        #expect(list.entries.first?.summary == "Локальный")
        #expect(list.entries.last?.remoteRecord?.certificateID == "12831")
        #expect(list.unavailable[ProviderID("test.down")]?.code == .network)

        try await coordinator.removeSignature(id: "121", location: .server(.fmpDSS))
        try await coordinator.removeSignature(id: local.record.id, location: .journal)
        #expect(try await coordinator.signatures().entries.isEmpty)
        await #expect(throws: CertificateProviderError(.notStored, "")) {
            try await coordinator.removeSignature(id: "121", location: .server(.fmpDSS))
        }
        await #expect(throws: CertificateProviderError(.notStored, "")) {
            try await coordinator.removeSignature(id: local.record.id, location: .journal)
        }
        await #expect(throws: CertificateProviderError(.unsupportedOperation, "")) {
            try await coordinator.removeSignature(id: "1", location: .server(.pkcs12))
        }
    }

    @Test("Batch signing: one identity, files written per document, one journal transaction, openssl accepts each")
    func batch() async throws {
        let provider = InMemoryCertificateProvider(id: .pkcs12, identity: fixture.rsa)
        let coordinator = try makeCoordinator { registry in
            try registry.register(.pkcs12, description: "") { provider }
        }
        let output = directory.url.appendingPathComponent("batch")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let documents = (0..<4).map { Document.bytes(Self.content + [UInt8($0)], name: "Документ \($0)") }
        let progress = Mutex<[Int64]>([])
        let results = try await coordinator.sign(
            documents: documents,
            provider: .pkcs12,
            options: SigningOptions(digestAlgorithm: .sha512),
            outputDirectory: output
        ) { done, total in
            #expect(total == 4)
            progress.withLock { $0.append(done) }
        }
        #expect(progress.withLock { $0 } == [1, 2, 3, 4])
        #expect(provider.initializeCount == 1)
        #expect(results.map(\.record.documentName) == documents.map(\.name))
        for (index, result) in results.enumerated() {
            let file = output.appendingPathComponent("Документ \(index).p7s")
            #expect(result.outputURL == file)
            #expect(result.record.storage == .file(file))
            #expect(Array(try Data(contentsOf: file)) == result.signature)
            let tool = try OpenSSLCLI.verify(
                signature: result.signature,
                content: Self.content + [UInt8(index)],
                detached: true,
                root: fixture.pki.root.certificate,
                cades: true
            )
            #expect(tool.succeeded, "\(tool.errorOutput)")
        }
        #expect(try await coordinator.journal.count() == 4)

        await #expect(throws: CertificateProviderError(.invalidParameter, "")) {
            _ = try await coordinator.sign(
                documents: [.bytes([1], name: "a/b")],
                provider: .pkcs12,
                outputDirectory: output
            )
        }
    }

    @Test("A batch that fails midway records the signatures made before the failure")
    func batchFailure() async throws {
        let coordinator = try makeCoordinator { registry in
            try registry.register(.pkcs12, description: "") {
                InMemoryCertificateProvider(id: .pkcs12, identity: fixture.ec, storedFromStart: true)
            }
        }
        let missing = URL(fileURLWithPath: directory.path("missing.bin"))
        await #expect(throws: CertificateProviderError(.fileSystem, "")) {
            _ = try await coordinator.sign(
                documents: [
                    .bytes(Self.content, name: "первый"), .file(missing), .bytes(Self.content, name: "третий"),
                ],
                provider: .pkcs12
            )
        }
        #expect(try await coordinator.journal.records().map(\.documentName) == ["первый"])
    }
}
