import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import TestSupport
import Testing

@Suite("PKCS#12 identity store")
struct IdentityStoreTests {
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? NSNumber).intValue & 0o777
    }

    /// Fast writes for tests that do not look at iteration counts.
    static let fast = PKCS12File.EncodingOptions(iterations: 64, macIterations: 64)

    /// An empty store in a new temporary directory.
    static func makeStore() throws -> (TemporaryDirectory, PKCS12IdentityStore) {
        let directory = try TemporaryDirectory()
        return (directory, PKCS12IdentityStore(directory: directory.url))
    }

    /// Imports a new leaf for `subject` into `store` under `alias` (store password "pw-store-1", ``fast``).
    /// - Returns: the imported identity.
    @discardableResult
    static func importLeaf(
        _ subject: String,
        as alias: String,
        into store: PKCS12IdentityStore
    ) throws
        -> SigningIdentity
    {
        let identity = try Fixtures.pki.issueLeaf(subject: subject)
        try store.import(identity, alias: alias, storePassword: Secret("pw-store-1"), options: fast)
        return identity
    }

    @Test("round trip: import, list without password, unlock, sign, export, delete")
    func roundTrip() async throws {
        let directory = try TemporaryDirectory()
        let store = PKCS12IdentityStore(directory: directory.url.appendingPathComponent("store"))
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Store Round Trip,O=ООО Ромашка", keyType: .p256)
        let alias = "Подпись Иванова"
        let metadata = try store.import(original, alias: alias, storePassword: Secret("хранилище"))
        #expect(metadata.subject == original.certificate.subject)
        #expect(metadata.chainLength == 1)

        // Listing and metadata need no password.
        let listed = try store.list()
        #expect(listed == [metadata])
        #expect(try store.metadata(alias: alias)?.sha256Fingerprint == original.certificate.sha256FingerprintHex)
        #expect(try store.metadata(alias: "absent") == nil)

        let identity = try store.identity(alias: alias, password: Secret("хранилище"))
        #expect(identity.certificate == original.certificate)
        #expect(identity.chain == original.chain)
        if Fixtures.hasOpenSSL { try await Fixtures.signAndVerifyWithOpenSSL(identity) }

        expectError(.wrongPassword) { _ = try store.identity(alias: alias, password: Secret("wrong")) }
        expectError(.passwordRequired) { _ = try store.identity(alias: alias, password: nil) }
        expectError(.notStored) { _ = try store.identity(alias: "absent", password: Secret("x")) }
        expectError(.alreadyExists) {
            try store.import(original, alias: alias, storePassword: Secret("x-long-enough"), options: Self.fast)
        }

        // Export: a file other tools open with the new password.
        let exported = directory.path("exported.p12")
        try store.export(alias: alias, password: Secret("хранилище"), exportPassword: Secret("export-pw"), to: exported)
        #expect(try Self.mode(exported) == 0o600)
        let reopened = try PKCS12File(contentsOf: exported, password: Secret("export-pw"))
        #expect(try reopened.identity().certificate == original.certificate)
        if Fixtures.hasOpenSSL {
            try Fixtures.run(
                "openssl",
                ["pkcs12", "-in", exported, "-noout", "-passin", "env:P"],
                environment: ["P": "export-pw"]
            )
        }
        expectError(.alreadyExists) {
            try store.export(
                alias: alias,
                password: Secret("хранилище"),
                exportPassword: Secret("export-pw"),
                to: exported
            )
        }

        #expect(try store.delete(alias: alias))
        #expect(try store.delete(alias: alias) == false)
        #expect(try store.list().isEmpty)
    }

    @Test("stored copies hold the key PBES2/AES-256 at 600 000 iterations; no plaintext key on disk")
    func storedEncryption() throws {
        let (directory, store) = try Self.makeStore()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Encrypted At Rest")
        try store.import(original, alias: "at-rest", storePassword: Secret("pw-store-1"))
        let bytes = try #require(try store.pkcs12Data(alias: "at-rest"))
        let file = try PKCS12File(data: bytes, password: Secret("pw-store-1"))
        #expect(file.protection.plaintextKeyCount == 0)
        #expect(file.protection.keyEncryption.map(\.cipher) == ["AES-256-CBC"])
        #expect(file.protection.keyEncryption.first?.pseudoRandomFunction == "hmacWithSHA256")
        #expect((file.protection.keyEncryption.first?.iterations ?? 0) >= 600_000)
        // One derivation per unlock: certificates in the clear, no MAC (StoreEntryFormatTests).
        #expect(file.protection.contentEncryption.isEmpty)
        #expect(file.protection.macAlgorithm == nil)
        // No PKCS#8 key in the clear anywhere in the entry.
        let key = try #require(original.key as? LocalSigningKey)
        let pem = try key.pemRepresentation(password: nil)
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try #require(Data(base64Encoded: body))
        // The P-256 private scalar (ECPrivateKey: INTEGER 1, then an OCTET STRING of 32 bytes); the
        // PKCS#8's end is the public point, which the certificate carries in the clear anyway.
        let marker = try #require(der.range(of: Data([0x02, 0x01, 0x01, 0x04, 0x20])))
        let scalar = der[marker.upperBound..<marker.upperBound + 32]
        let entry = directory.url.appendingPathComponent("identities/at-rest")
        for name in try FileManager.default.contentsOfDirectory(atPath: entry.path) {
            let content = try Data(contentsOf: entry.appendingPathComponent(name))
            #expect(content.range(of: scalar) == nil, "\(name) holds key bytes in the clear")
            #expect(content.range(of: der.prefix(40)) == nil, "\(name) holds a PKCS#8 key in the clear")
        }
    }

    @Test(
        "importing a file with an empty password needs a store password",
        .enabled(if: Fixtures.hasOpenSSL, "openssl is not installed")
    )
    func importEmptyPasswordFile() async throws {
        let directory = try TemporaryDirectory()
        let store = PKCS12IdentityStore(directory: directory.url.appendingPathComponent("store"))
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Empty File Password")
        let bytes = try Fixtures.opensslExport(original, password: nil, in: directory)
        expectError(.passwordRequired) { try store.import(pkcs12Data: bytes, password: nil, alias: "empty") }
        #expect(try store.list().isEmpty)
        let imported = try store.import(
            pkcs12Data: bytes,
            password: nil,
            alias: "empty",
            storePassword: Secret("now protected")
        )
        #expect(imported.identity.certificate == original.certificate)
        try await Fixtures.signAndVerifyWithOpenSSL(
            try store.identity(alias: "empty", password: Secret("now protected"))
        )
        expectError(.wrongPassword) { _ = try store.identity(alias: "empty", password: Secret("")) }
    }

    @Test("modes: directories 0700, files 0600")
    func modes() throws {
        let directory = try TemporaryDirectory()
        let root = directory.url.appendingPathComponent("nested/store")
        let store = PKCS12IdentityStore(directory: root)
        try Self.importLeaf("CN=Modes", as: "modes", into: store)
        #expect(try Self.mode(root.path) == 0o700)
        #expect(try Self.mode(root.appendingPathComponent("identities").path) == 0o700)
        #expect(try Self.mode(root.appendingPathComponent("identities/modes").path) == 0o700)
        #expect(try Self.mode(root.appendingPathComponent("identities/modes/identity.p12").path) == 0o600)
        #expect(try Self.mode(root.appendingPathComponent("identities/modes/metadata.json").path) == 0o600)
        #expect(try Self.mode(root.appendingPathComponent("identities/.lock").path) == 0o600)
    }

    @Test("an existing directory the user points at keeps its mode; the store's own directory is private")
    func existingDirectoryKeepsMode() throws {
        let directory = try TemporaryDirectory()
        let shared = directory.url.appendingPathComponent("shared")
        try FileManager.default.createDirectory(
            at: shared,
            withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o755]
        )
        try FileManager.default.createDirectory(
            at: shared.appendingPathComponent("identities"),
            withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o755]
        )
        let store = PKCS12IdentityStore(directory: shared)
        try Self.importLeaf("CN=Shared", as: "shared", into: store)
        #expect(try Self.mode(shared.path) == 0o755)
        #expect(try Self.mode(shared.appendingPathComponent("identities").path) == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: shared.path) == ["identities"])
    }

    @Test(
        "alias validation",
        arguments: [
            "", "a/b", "..", ".hidden", "a..b", "tab\there", "nul\u{0}", " padded", String(repeating: "я", count: 101),
        ]
    )
    func badAliases(alias: String) throws {
        let (directory, store) = try Self.makeStore()
        let identity = try Fixtures.pki.issueLeaf(subject: "CN=Alias")
        expectError(.invalidParameter) {
            try store.import(identity, alias: alias, storePassword: Secret("pw-store-1"), options: Self.fast)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("identities/b")))
    }

    @Test("replacing an entry is atomic and keeps one entry")
    func replace() throws {
        let (directory, store) = try Self.makeStore()
        try Self.importLeaf("CN=First", as: "signer", into: store)
        let second = try Fixtures.pki.issueLeaf(subject: "CN=Second")
        try store.import(
            second,
            alias: "signer",
            storePassword: Secret("pw-store-2"),
            replacingExisting: true,
            options: Self.fast
        )
        #expect(try store.list().map(\.subject) == ["CN=Second"])
        #expect(try store.identity(alias: "signer", password: Secret("pw-store-2")).certificate == second.certificate)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path("identities")).filter {
            $0.hasPrefix(".") && $0 != ".lock"
        }
        #expect(leftovers.isEmpty)
    }

    @Test("a crash between write and rename leaves a readable store; leftovers are ignored, then cleaned")
    func crashBetweenWriteAndRename() throws {
        let (directory, store) = try Self.makeStore()
        let old = try Self.importLeaf("CN=Old Entry", as: "signer", into: store)
        let identities = directory.url.appendingPathComponent("identities")

        // 1. A complete new entry written but never renamed into place.
        let new = try Fixtures.pki.issueLeaf(subject: "CN=New Entry")
        let complete = identities.appendingPathComponent(".tmp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: complete, withIntermediateDirectories: false)
        try Data(try PKCS12File.encode(new, password: Secret("pw-store-1"), options: Self.fast)).write(
            to: complete.appendingPathComponent("identity.p12")
        )
        try Data(#"{"alias":"signer"}"#.utf8).write(to: complete.appendingPathComponent("metadata.json"))
        // 2. A half-written temporary file (the process died inside write()).
        let half = identities.appendingPathComponent(".tmp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: half, withIntermediateDirectories: false)
        let full = try PKCS12File.encode(new, password: Secret("pw-store-1"), options: Self.fast)
        try Data(full.prefix(full.count / 2)).write(to: half.appendingPathComponent("identity.p12"))
        // 3. A deletion that renamed the entry aside but died before removing it.
        let deleted = identities.appendingPathComponent(".deleted-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: deleted, withIntermediateDirectories: false)

        #expect(try store.list().map(\.subject) == ["CN=Old Entry"])
        #expect(try store.identity(alias: "signer", password: Secret("pw-store-1")).certificate == old.certificate)

        // The next change cleans the leftovers.
        try store.import(new, alias: "other", storePassword: Secret("pw-store-1"), options: Self.fast)
        let hidden = try FileManager.default.contentsOfDirectory(atPath: identities.path).filter {
            $0.hasPrefix(".") && $0 != ".lock"
        }
        #expect(hidden.isEmpty, "\(hidden)")
        #expect(try store.list().map(\.alias) == ["other", "signer"])
    }

    @Test("a crash in the middle of a replacement puts the old entry back")
    func crashDuringReplacement() throws {
        let (directory, store) = try Self.makeStore()
        let old = try Self.importLeaf("CN=Moved Aside", as: "signer", into: store)
        // The replacement renamed the old entry aside, then died before renaming the new one in.
        let identities = directory.url.appendingPathComponent("identities")
        try FileManager.default.moveItem(
            at: identities.appendingPathComponent("signer"),
            to: identities.appendingPathComponent(".replaced-\(UUID().uuidString)")
        )
        #expect(try store.list().isEmpty)
        try Self.importLeaf("CN=Unrelated", as: "unrelated", into: store)
        #expect(try store.identity(alias: "signer", password: Secret("pw-store-1")).certificate == old.certificate)
    }

    @Test("a damaged entry is reported as .storeCorrupted")
    func corruptedEntry() throws {
        let (directory, store) = try Self.makeStore()
        try Self.importLeaf("CN=Damaged", as: "damaged", into: store)
        let p12 = directory.path("identities/damaged/identity.p12")
        let bytes = try directory.read("identities/damaged/identity.p12")
        try Data(bytes.prefix(200)).write(to: URL(fileURLWithPath: p12))
        expectError(.storeCorrupted) {
            _ = try store.identity(alias: "damaged", password: Secret("pw-store-1"))
        }
        try Data("not json".utf8).write(to: URL(fileURLWithPath: directory.path("identities/damaged/metadata.json")))
        expectError(.storeCorrupted) { _ = try store.metadata(alias: "damaged") }
        #expect(try store.list().isEmpty)
    }

    @Test(
        "two processes importing the same alias: one succeeds, one gets .alreadyExists; different aliases: both succeed"
    )
    func concurrentImports() throws {
        let directory = try TemporaryDirectory()
        let first = try Fixtures.pki.issueLeaf(subject: "CN=Process One")
        let second = try Fixtures.pki.issueLeaf(subject: "CN=Process Two")
        let firstPath = try directory.write(
            "one.p12",
            try PKCS12File.encode(first, password: Secret("in"), options: Self.fast)
        )
        let secondPath = try directory.write(
            "two.p12",
            try PKCS12File.encode(second, password: Secret("in"), options: Self.fast)
        )
        let tool = Fixtures.storeToolPath
        #expect(FileManager.default.isExecutableFile(atPath: tool), "\(tool) is missing")

        for (round, aliases) in [["same", "same"], ["left", "right"]].enumerated() {
            let storePath = directory.path("store-\(round)")
            let signal = directory.path("go-\(round)")
            let inputs = Array(zip([firstPath, secondPath], aliases))
            let processes = try inputs.map { file, alias -> (Process, ExternalTool.CloseOnExecPipe) in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: tool)
                process.arguments = ["import", storePath, alias, file]
                process.environment = ["PKCS12_PASSWORD": "in", "STORE_PASSWORD": "stored-pw", "START_AFTER": signal]
                let pipe = try ExternalTool.CloseOnExecPipe()
                process.standardOutput = pipe.writing
                try process.run()
                try pipe.writing.close()
                return (process, pipe)
            }
            // Both processes are up and parsed their input; release them together.
            Thread.sleep(forTimeInterval: 0.3)
            #expect(FileManager.default.createFile(atPath: signal, contents: nil))
            let outputs = processes.map { process, pipe -> String in
                let output = String(decoding: pipe.reading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                return output
            }
            let store = PKCS12IdentityStore(directory: URL(fileURLWithPath: storePath))
            if aliases[0] == aliases[1] {
                #expect(outputs.filter { $0.hasPrefix("ok") }.count == 1, "\(outputs)")
                #expect(outputs.filter { $0.hasPrefix("error alreadyExists") }.count == 1, "\(outputs)")
                let stored = try store.identity(alias: "same", password: Secret("stored-pw"))
                #expect([first.certificate, second.certificate].contains(stored.certificate))
                #expect(try store.list().count == 1)
            } else {
                #expect(outputs.allSatisfy { $0.hasPrefix("ok") }, "\(outputs)")
                #expect(try store.list().map(\.alias) == ["left", "right"])
            }
            let hidden = try FileManager.default.contentsOfDirectory(atPath: storePath + "/identities").filter {
                $0.hasPrefix(".") && $0 != ".lock"
            }
            #expect(hidden.isEmpty)
        }
    }
}
