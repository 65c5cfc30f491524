import CertificateProviders
import CertificateProvidersTesting
internal import Durability
import Foundation
import SignatureJournal
import Synchronization
import TestSupport
import Testing

@testable import Signing

/// `SigningCoordinator.signEach`: the batch pipeline (every core, a prepared SignedData per worker,
/// one directory sync and one journal commit per group). Every signature it makes is checked by
/// `openssl cms -verify` and by Python (asn1crypto parses, cryptography checks the signature over the
/// DER signed attributes): a third party's decoder and verifier.
@Suite struct BatchSigningTests {
    let fixture: Fixture
    let directory: TemporaryDirectory

    init() throws {
        fixture = try Fixture(sharedBy: .signingSuites)
        directory = try TemporaryDirectory(prefix: "signing-batch")
    }

    /// Checks a detached or attached CMS with asn1crypto + cryptography; prints "ok".
    static let pythonVerifier = """
        import hashlib, sys
        from asn1crypto import cms
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
        info = cms.ContentInfo.load(open(sys.argv[1], "rb").read())
        signed = info["content"]
        content = open(sys.argv[2], "rb").read()
        embedded = signed["encap_content_info"]["content"]
        if embedded.native is not None:
            assert embedded.native == content, "embedded content differs"
        signer = signed["signer_infos"][0]
        serial = signer["sid"].chosen["serial_number"].native
        chosen = [c.chosen for c in signed["certificates"] if c.chosen.serial_number == serial][0]
        certificate = x509.load_der_x509_certificate(chosen.dump())
        attributes = signer["signed_attrs"]
        digest = [a["values"][0].native for a in attributes if a["type"].native == "message_digest"][0]
        assert digest == hashlib.sha256(content).digest(), "messageDigest is not the content's SHA-256"
        encoded = b"\\x31" + attributes.dump()[1:]
        key = certificate.public_key()
        signature = signer["signature"].native
        if isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(signature, encoded, ec.ECDSA(hashes.SHA256()))
        else:
            key.verify(signature, encoded, padding.PKCS1v15(), hashes.SHA256())
        print("ok")
        """

    @Test(
        "signEach with RSA and EC keys, CAdES-BES and CMS, detached and attached: every signature verifies with openssl and Python, one journal row each",
        arguments: [true, false]
    )
    func everySignatureVerifies(detached: Bool) async throws {
        let script = try directory.write("verify.py", text: Self.pythonVerifier)
        for (name, identity) in [("rsa", fixture.rsa), ("ec", fixture.ec)] {
            for format in [SignatureFormat.cadesBES, .cms] {
                var registry = ProviderRegistry()
                try registry.register(.pkcs12, description: "") {
                    InMemoryCertificateProvider(id: .pkcs12, identity: identity, storedFromStart: true)
                }
                let coordinator = SigningCoordinator(
                    registry: registry,
                    journal: try SignatureJournal(url: directory.url.appendingPathComponent("j-\(UUID()).sqlite"))
                )
                let output = directory.url.appendingPathComponent("out-\(name)-\(format.rawValue)-\(detached)")
                try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
                // Sizes around the read buffer (256 KiB), and an empty document.
                let sizes = [0, 1, 1024, 262_144, 262_145, 700_000]
                var documents: [Document] = []
                var contents: [[UInt8]] = []
                for (index, size) in sizes.enumerated() {
                    let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }
                    let path = try directory.write("\(name)-\(format.rawValue)-\(detached)-\(index).bin", bytes)
                    documents.append(.file(URL(fileURLWithPath: path)))
                    contents.append(bytes)
                }
                // One document as bytes, kept in the journal.
                documents.append(.bytes([1, 2, 3], name: "в памяти"))
                contents.append([1, 2, 3])
                let outputs: [URL?] =
                    documents.indices.map { index in
                        index < sizes.count ? output.appendingPathComponent("\(index).p7s") : nil
                    }
                let outcomes = try await coordinator.signEach(
                    documents,
                    outputs: outputs,
                    provider: .pkcs12,
                    options: SigningOptions(format: format, isDetached: detached)
                )
                #expect(try await coordinator.journal.count() == documents.count)
                for (index, outcome) in outcomes.enumerated() {
                    let result = try outcome.get()
                    let context = "\(name) \(format) detached \(detached) document \(index)"
                    #expect(result.record.documentSize == Int64(contents[index].count), "\(context)")
                    #expect(result.record.digestAlgorithm == .sha256)
                    if let url = outputs[index] {
                        #expect(Array(try Data(contentsOf: url)) == result.signature, "\(context)")
                    }
                    let oracle = try OpenSSLCLI.verify(
                        signature: result.signature,
                        content: contents[index],
                        detached: detached,
                        root: fixture.pki.root.certificate,
                        cades: format == .cadesBES
                    )
                    #expect(oracle.succeeded, "openssl: \(context): \(oracle.errorOutput)")
                    let signaturePath = try directory.write("check.p7s", result.signature)
                    let contentPath = try directory.write("check.bin", contents[index])
                    let python = try ExternalTool.run("python3", [script, signaturePath, contentPath])
                    #expect(python.output.contains("ok"), "python: \(context): \(python.errorOutput)")
                    let ours = CMSVerifier.verify(
                        signature: result.signature,
                        content: contents[index],
                        trustAnchors: [fixture.pki.root.certificate]
                    )
                    #expect(ours.isValid && ours.format == format && ours.isDetached == detached, "\(context): \(ours)")
                }
            }
        }
    }

    @Test("signEach: a failing document fails alone; the others are signed and recorded")
    func failingDocumentFailsAlone() async throws {
        var registry = ProviderRegistry()
        try registry.register(.pkcs12, description: "") {
            InMemoryCertificateProvider(id: .pkcs12, identity: fixture.ec, storedFromStart: true)
        }
        let coordinator = SigningCoordinator(
            registry: registry,
            journal: try SignatureJournal(url: directory.url.appendingPathComponent("failing.sqlite"))
        )
        let output = directory.url.appendingPathComponent("failing")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let good = try directory.write("good.txt", text: "good\n")
        let documents: [Document] = [
            .file(URL(fileURLWithPath: good)), .file(directory.url.appendingPathComponent("missing.txt")),
            .file(directory.url),
        ]
        let outputs = (0..<3).map { Optional(output.appendingPathComponent("\($0).p7s")) }
        let outcomes = try await coordinator.signEach(documents, outputs: outputs, provider: .pkcs12)
        #expect((try? outcomes[0].get()) != nil)
        for index in [1, 2] {
            guard case .failure(let error) = outcomes[index] else {
                Issue.record("document \(index) did not fail")
                continue
            }
            #expect(error.code == .fileSystem, "\(error)")
            #expect(!FileManager.default.fileExists(atPath: output.appendingPathComponent("\(index).p7s").path))
        }
        #expect(try await coordinator.journal.records().map(\.documentName) == ["good.txt"])
        await #expect(throws: CertificateProviderError(.invalidParameter, "")) {
            _ = try await coordinator.signEach(documents, outputs: [nil], provider: .pkcs12)
        }
    }

    @Test(
        "signEach removes the hidden temporary files a killed batch left for its outputs (of any age), nothing else"
    )
    func staleTemporariesAreRemoved() async throws {
        let (coordinator, output, documents, outputs) = try makeBatch("stale", count: 10)
        let hourAgo = Date().addingTimeInterval(-3600)
        /// A file (or what `make` makes) at `name` in the output directory, last modified at `date`.
        func leave(_ name: String, modified date: Date, make: (String) throws -> Void) throws -> String {
            let path = output.appendingPathComponent(name).path
            try make(path)
            var times = [timespec(tv_sec: Int(date.timeIntervalSince1970), tv_nsec: 0)]
            times.append(times[0])
            #expect(utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) == 0)
            return path
        }
        func file(_ path: String) throws {
            try Data("left by a killed batch".utf8).write(to: URL(fileURLWithPath: path))
        }
        func name(of path: String) -> String { (path as NSString).lastPathComponent }
        let outside = try directory.write("outside.txt", text: "not ours\n")
        var stale = try [0, 5, 9].map { index in
            try leave(name(of: FileSystem.temporaryPath(for: outputs[index]!.path)), modified: hourAgo, make: file)
        }
        // Fresh (left by a run interrupted a moment ago): removed as well.
        stale.append(try leave(name(of: FileSystem.temporaryPath(for: outputs[1]!.path)), modified: Date(), make: file))
        let kept = [
            // For a name this batch does not write.
            try leave(
                name(of: FileSystem.temporaryPath(for: output.appendingPathComponent("other.p7s").path)),
                modified: hourAgo,
                make: file
            ),
            // Not the pattern: lower-case hex, a short suffix, no leading dot.
            try leave(".2.p7s.tmp-" + String(repeating: "a", count: 32), modified: hourAgo, make: file),
            try leave(".2.p7s.tmp-ABCDEF", modified: hourAgo, make: file),
            try leave("3.p7s.tmp-" + String(repeating: "A", count: 32), modified: hourAgo, make: file),
            // The pattern, but a symbolic link and a directory.
            try leave(name(of: FileSystem.temporaryPath(for: outputs[4]!.path)), modified: hourAgo) { path in
                try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: outside)
            },
            try leave(name(of: FileSystem.temporaryPath(for: outputs[6]!.path)), modified: hourAgo) { path in
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            },
        ]
        let outcomes = try await coordinator.signEach(documents, outputs: outputs, provider: .pkcs12)
        #expect(outcomes.allSatisfy { (try? $0.get()) != nil })
        for path in stale { #expect(!FileSystem.exists(path), "\(path) was left") }
        for path in kept { #expect(FileSystem.exists(path), "\(path) was removed") }
        #expect(FileManager.default.fileExists(atPath: outside))
        let signatures = try FileManager.default.contentsOfDirectory(atPath: output.path).filter {
            $0.hasSuffix(".p7s")
        }
        #expect(signatures.sorted() == (0..<10).map { "\($0).p7s" }.sorted(), "\(signatures)")
    }

    @Test(
        "removeStaleTemporaries reads every name of a 3,000-file directory (readdir packs the last entries of its buffer short)"
    )
    func staleTemporariesAmongThousandsOfFiles() throws {
        // Names as short as they come fill readdir's buffer to within a few bytes of its end; a name
        // read as a whole `dirent` there runs past the buffer (ASan: heap-buffer-overflow; this
        // suite runs under ASan in CI). Every 100th signature has a stale temporary beside it.
        let names = (0..<3000).map { String($0, radix: 36) }
        var temporaries: [String] = []
        for (index, name) in names.enumerated() {
            _ = try directory.write(name, text: "")
            guard index % 100 == 0 else { continue }
            let temporary = FileSystem.temporaryPath(for: directory.path(name))
            try Data("left by a killed batch".utf8).write(to: URL(fileURLWithPath: temporary))
            temporaries.append(temporary)
        }
        let removed = FileSystem.removeStaleTemporaries(in: directory.url.path, for: Set(names), olderThan: 0)
        #expect(removed == temporaries.count)
        #expect(temporaries.allSatisfy { !FileSystem.exists($0) })
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(left.count == names.count, "only the temporaries went")
    }

    @Test(
        "signEach cancelled after its first group: that group is committed whole, the next group's files are removed, every later document is .cancelled (issue 30 item 5)"
    )
    func cancelledAfterFirstGroup() async throws {
        let count = SigningCoordinator.batchGroupSize * 2 + 100
        let (coordinator, output, documents, outputs) = try makeBatch("cancelled", count: count)
        let task = Task {
            try await coordinator.signEach(documents, outputs: outputs, provider: .pkcs12) { done, _ in
                // Called once per document of a committed group: the first group's last one cancels.
                if done == Int64(SigningCoordinator.batchGroupSize) { withUnsafeCurrentTask { $0?.cancel() } }
            }
        }
        let outcomes = try await task.value
        #expect(outcomes.count == count)
        let signed = outcomes.prefix(SigningCoordinator.batchGroupSize)
        #expect(signed.allSatisfy { (try? $0.get()) != nil })
        for outcome in outcomes.dropFirst(SigningCoordinator.batchGroupSize) {
            guard case .failure(let error) = outcome else {
                Issue.record("a document after the cancelled group was signed")
                continue
            }
            #expect(error.code == .cancelled)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: output.path)
        #expect(names.filter { $0.contains(".tmp-") }.isEmpty, "temporary files were left")
        #expect(names.filter { $0.hasSuffix(".p7s") }.count == SigningCoordinator.batchGroupSize)
        #expect(try await coordinator.journal.count() == SigningCoordinator.batchGroupSize)
        for index in [0, SigningCoordinator.batchGroupSize - 1] {
            let signature = try #require(try? outcomes[index].get())
            #expect(FileManager.default.fileExists(atPath: signature.outputURL?.path ?? ""))
        }
    }

    /// A coordinator (``makeCoordinator(_:)``), an empty output folder `name`, `count` small
    /// documents `N.txt` and their outputs `name/N.p7s`.
    func makeBatch(
        _ name: String,
        count: Int
    ) throws -> (SigningCoordinator, URL, [Document], [URL?]) {
        let (coordinator, output) = try makeCoordinatorAndFolder(name)
        let documents = (0..<count).map { Document.bytes(Array("document \($0)".utf8), name: "\($0).txt") }
        let outputs = (0..<count).map { Optional(output.appendingPathComponent("\($0).p7s")) }
        return (coordinator, output, documents, outputs)
    }

    /// A coordinator (``makeCoordinator(_:)``) and an empty output folder `name`.
    func makeCoordinatorAndFolder(_ name: String) throws -> (SigningCoordinator, URL) {
        let coordinator = try makeCoordinator(name)
        let output = directory.url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        return (coordinator, output)
    }

    /// A coordinator over the EC signer (stored), with its own journal.
    func makeCoordinator(_ name: String) throws -> SigningCoordinator {
        var registry = ProviderRegistry()
        try registry.register(.pkcs12, description: "") {
            InMemoryCertificateProvider(id: .pkcs12, identity: fixture.ec, storedFromStart: true)
        }
        return SigningCoordinator(
            registry: registry,
            journal: try SignatureJournal(url: directory.url.appendingPathComponent("\(name).sqlite"))
        )
    }

    @Test(
        "signEach over two groups: many files on one file system are synced together (one syncfs), a few files on another are fsynced each; every file is in place, none is left hidden"
    )
    func groupsMadeDurableTogether() async throws {
        let (coordinator, disk) = try makeCoordinatorAndFolder("groups")
        // A second file system when the machine has one (tmpfs): 3 files there, too few for a syncfs.
        let shm = URL(fileURLWithPath: "/dev/shm/signing-batch-groups-\(UUID().uuidString)")
        let memory: URL? = (try? FileManager.default.createDirectory(at: shm, withIntermediateDirectories: false))
            .map { shm }
        defer { if let memory { try? FileManager.default.removeItem(at: memory) } }
        let count = SigningCoordinator.batchGroupSize + 5
        let documents = (0..<count).map { Document.bytes([UInt8(truncatingIfNeeded: $0), 7, 7], name: "d\($0)") }
        let outputs: [URL?] = (0..<count).map { index in
            (index < 3 ? memory ?? disk : disk).appendingPathComponent("d\(index).p7s")
        }
        let diskPlan = BatchSigningPipeline.syncPlan(outputs, range: 0..<SigningCoordinator.batchGroupSize)
        let separate = memory.map { FileSystem.device(of: $0.path) != FileSystem.device(of: disk.path) } ?? false
        #expect(diskPlan[3...].allSatisfy { $0 }, "500 files in one directory are synced together")
        #expect(diskPlan[..<3].allSatisfy { $0 == !separate }, "3 files on tmpfs are fsynced each")
        #expect(
            BatchSigningPipeline.syncPlan(outputs, range: SigningCoordinator.batchGroupSize..<count)
                == [Bool](
                    repeating: false,
                    count: 5
                ),
            "a group of 5 files fsyncs each"
        )
        let done = Mutex<[Int64]>([])
        let outcomes = try await coordinator.signEach(documents, outputs: outputs, provider: .pkcs12) { made, _ in
            done.withLock { $0.append(made) }
        }
        #expect(done.withLock { $0 } == (1...Int64(count)).map { $0 }, "progress in order, once each")
        #expect(try await coordinator.journal.count() == count)
        for (index, outcome) in outcomes.enumerated() {
            let result = try outcome.get()
            let file = try #require(outputs[index])
            #expect(Array(try Data(contentsOf: file)) == result.signature, "d\(index)")
            if [0, 2, 3, 250, 499, 500, count - 1].contains(index) {
                let tool = try OpenSSLCLI.verify(
                    signature: result.signature,
                    content: [UInt8(truncatingIfNeeded: index), 7, 7],
                    detached: true,
                    root: fixture.pki.root.certificate,
                    cades: true
                )
                #expect(tool.succeeded, "d\(index): \(tool.errorOutput)")
            }
        }
        for folder in [disk.path] + (memory.map { [$0.path] } ?? []) {
            let hidden = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(".") }
            #expect(hidden.isEmpty, "left in \(folder): \(hidden.prefix(3))")
        }
    }

    @Test(
        "sign(documents:outputDirectory:) stops at the first failure in a synced-together group: the files before it are recorded, nothing after it is left, and an older signature file after it is kept"
    )
    func firstFailureInASyncedGroup() async throws {
        let (coordinator, output) = try makeCoordinatorAndFolder("first-failure")
        var documents: [Document] = []
        for index in 0..<12 {
            let path = try directory.write("ff-\(index).txt", text: "document \(index)\n")
            documents.append(.file(URL(fileURLWithPath: path)))
        }
        documents[5] = .file(directory.url.appendingPathComponent("ff-missing.txt"))
        let older = output.appendingPathComponent("ff-8.txt.p7s")
        try Data("an older signature".utf8).write(to: older)
        await #expect(throws: CertificateProviderError(.fileSystem, "")) {
            _ = try await coordinator.sign(documents: documents, provider: .pkcs12, outputDirectory: output)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: output.path).sorted()
        #expect(names == (0..<5).map { "ff-\($0).txt.p7s" } + ["ff-8.txt.p7s"], "\(names)")
        #expect(
            try Data(contentsOf: older) == Data("an older signature".utf8),
            "the older file was replaced or removed"
        )
        #expect(try await coordinator.journal.records().map(\.documentName).sorted() == (0..<5).map { "ff-\($0).txt" })
    }
}
