import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import SignatureJournal
import Signing
import TestSupport
import Testing

/// A test CA, one signer as a `.p12` made by the real `openssl pkcs12 -export` (their members read
/// through: `fixture.signer`, `fixture.p12Path`), a private store and a work directory for
/// documents, exports and the logs of every `certsign` run.
@dynamicMemberLookup
struct CrashFixture {
    let work: TemporaryDirectory
    let store: TemporaryDirectory
    let files: PKCS12SignerFiles
    /// Verifies signatures in-process (the same code as `certsign verify`), with a journal of its own.
    let verifier: SigningCoordinator
    private let runs = Counter()

    init(keyType: LocalSigningKey.GenerationParameters) throws {
        work = try TemporaryDirectory(prefix: "certsign-crash")
        store = try TemporaryDirectory(prefix: "certsign-crash-store")
        files = try PKCS12SignerFiles(
            rootSubject: "CN=Crash Test Root,O=Тест",
            rootKeyType: .p256,
            signerSubject: "CN=Подписант,O=Crash",
            keyType: keyType,
            password: "крэш-Тест-7",
            in: work
        )
        try FileManager.default.createDirectory(atPath: work.path("logs"), withIntermediateDirectories: true)
        verifier = SigningCoordinator(
            registry: ProviderRegistry(),
            journal: try SignatureJournal(url: work.url.appendingPathComponent("verify.sqlite"))
        )
    }

    subscript<T>(dynamicMember member: KeyPath<PKCS12SignerFiles, T>) -> T { files[keyPath: member] }

    /// The environment of every run: the store, and the password in a variable (never in argv).
    var environment: [String: String] { ["CERTSIGN_HOME": store.url.path, "CS_PASSWORD": files.password, "TZ": "UTC"] }

    /// A fresh log path prefix for one run.
    func log(_ name: String) -> String { work.path("logs/\(runs.next())-\(name)") }

    var identityStore: PKCS12IdentityStore { PKCS12IdentityStore(directory: store.url) }
    var identitiesDirectory: String { store.path("identities") }
    var journalURL: URL { store.url.appendingPathComponent("journal.sqlite") }

    func importArguments(alias: String, replace: Bool = false) -> [String] {
        ["identity", "import", files.p12Path, "--alias", alias, "--password-env", "CS_PASSWORD"]
            + (replace ? ["--replace-identity"] : [])
    }

    func signArguments(_ documents: [String], identity: String = "signer") -> [String] {
        ["--json", "sign"] + documents + ["--identity", identity, "--password-env", "CS_PASSWORD"]
    }

    func exportArguments(alias: String = "signer", to path: String) -> [String] {
        ["identity", "export", alias, "--out", path, "--password-env", "CS_PASSWORD"]
    }

    /// Runs certsign to completion through `ExternalTool` (stdout captured) for the final checks.
    func certsign(_ arguments: [String]) throws -> ExternalTool.Result {
        let result = try CLI.run(arguments, environment: environment)
        #expect(
            !result.output.contains(files.password) && !result.errorOutput.contains(files.password),
            "a password leaked: \(arguments)"
        )
        return result
    }

    /// `openssl cms -verify` of a detached CAdES signature against the test root.
    func opensslVerifies(_ signature: String, content: String) throws -> Bool {
        try OpenSSLCMS.verify(signatureFile: signature, contentFile: content, caFile: files.rootPath, cades: true)
            .succeeded
    }

    /// Verifies the detached signature file `signature` over `document` with ``verifier`` against the
    /// test root.
    /// - Throws: when the signature file or the document cannot be read.
    func verify(_ signature: String, over document: String) async throws -> VerificationResult {
        try await verifier.verify(
            signature: Array(try Data(contentsOf: URL(fileURLWithPath: signature))),
            content: .file(URL(fileURLWithPath: document)),
            trust: [files.pki.root.certificate]
        )
    }

    /// `openssl pkcs12` opens an exported file with the password.
    func opensslOpens(_ pkcs12: String) throws -> Bool {
        try ExternalTool.run(
            "openssl",
            ["pkcs12", "-in", pkcs12, "-noout", "-passin", "env:P"],
            environment: ["P": files.password]
        ).succeeded
    }

    /// Parses stdout as one JSON object.
    static func json(_ result: ExternalTool.Result) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: result.standardOutput)
        return try #require(object as? [String: Any], "stdout is not a JSON object: \(result.output)")
    }

    /// Names in `directory`, hidden ones and visible ones apart.
    static func names(in directory: String) -> (visible: [String], hidden: [String]) {
        let all = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return (all.filter { !$0.hasPrefix(".") }.sorted(), all.filter { $0.hasPrefix(".") }.sorted())
    }

    /// How many entries of `directory` are not hidden (0 while it does not exist): cheap enough
    /// (`readdir`, no sorting) to poll while a batch writes thousands of files into it.
    static func visibleCount(in directory: String) -> Int {
        guard let stream = opendir(directory) else { return 0 }
        defer { closedir(stream) }
        var count = 0
        while let entry = readdir(stream) {
            // Only the first byte of the name: '.' starts hidden names, "." and "..".
            if UInt8(bitPattern: entry.pointee.d_name.0) != UInt8(ascii: ".") { count += 1 }
        }
        return count
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }
}

/// The checks made after every kill.
extension CrashFixture {
    /// Every visible store entry is complete, every reported import is listed, `alias` (if there) opens.
    func checkIdentities(mustHave imported: Set<String>, open alias: String? = nil, context: String) throws {
        let store = identityStore
        let visible = CrashFixture.names(in: identitiesDirectory).visible
        for name in visible {
            #expect(throws: Never.self, "entry '\(name)' is broken; \(context)") {
                _ = try #require(try store.metadata(alias: name))
                _ = try #require(try store.pkcs12Data(alias: name))
            }
        }
        #expect(
            imported.isSubset(of: Set(visible)),
            "reported imports vanished: \(imported.subtracting(visible)); \(context)"
        )
        #expect(
            Set(try store.list().map(\.alias)) == Set(visible),
            "the store lists other entries than it holds; \(context)"
        )
        if let alias, visible.contains(alias) {
            let identity = try store.identity(alias: alias, password: Secret(files.password))
            #expect(identity.certificate.sha256Fingerprint == files.signer.certificate.sha256Fingerprint, "\(context)")
        }
    }

    /// The journal opens and is intact, has a row for every reported signature, no row without its file.
    func checkJournal(mustHave signed: [String], context: String) async throws {
        let journal = try SignatureJournal(url: journalURL)
        try await journal.checkIntegrity()
        let records = try await journal.records()
        var files = Set<String>()
        for record in records {
            guard case .file(let url) = record.storage else {
                Issue.record("row \(record.id) has no signature file; \(context)")
                continue
            }
            files.insert(url.path)
            #expect(
                FileManager.default.fileExists(atPath: url.path),
                "row \(record.id) points to a missing \(url.path); \(context)"
            )
        }
        #expect(files.count == records.count, "two rows for one signature file; \(context)")
        for document in signed {
            #expect(
                files.contains(document + ".p7s"),
                "the reported signature of \(document) has no journal row; \(context)"
            )
        }
    }
}

/// A thread-safe counter for unique log names.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}
