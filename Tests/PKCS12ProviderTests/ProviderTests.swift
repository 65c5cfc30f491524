import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import TestSupport
import Testing

@Suite("PKCS12CertificateProvider (SAP contract)")
struct ProviderTests {
    static func fileBytes(_ identity: SigningIdentity, password: String) throws -> [UInt8] {
        try PKCS12File.encode(
            identity,
            password: Secret(password),
            friendlyName: "from-file",
            options: .init(iterations: 64, macIterations: 64)
        )
    }

    @Test("a bad parameter is refused alike at init, setParameters and initialize(options:)")
    func validationMoment() async throws {
        let both: ProviderParameters = [
            PKCS12CertificateProvider.ParameterKey.file: .string("/nonexistent/id.p12"),
            PKCS12CertificateProvider.ParameterKey.data: .data([0x30, 0x00]),
        ]
        let reason = try await expectRefusedAtEveryMoment(both) { try PKCS12CertificateProvider(parameters: $0) }
        #expect(reason == "parameters 'file' and 'data' exclude each other; give one")
    }

    @Test("the keys live in PKCS12CertificateProvider.ParameterKey with the --param words stored parameters use")
    func parameterKeyWords() {
        typealias Key = PKCS12CertificateProvider.ParameterKey
        let keys = [
            Key.file, Key.data, Key.password, Key.passwordSource, Key.alias, Key.keyAlias, Key.storeDirectory,
            Key.storePassword, Key.storePasswordSource, Key.inMemory,
        ]
        #expect(
            keys.map(\.rawValue) == [
                "file", "data", "password", "passwordSource", "alias", "keyAlias", "storeDirectory", "storePassword",
                "storePasswordSource", "inMemory",
            ]
        )
        #expect(Set(keys) == PKCS12CertificateProvider.schema.keys && Key.all == Set(keys))
    }

    @Test("registry → initialize from a file → storedCertificate without reopening → delete")
    func lifecycle() async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Provider Signer", keyType: .p256)
        let path = try directory.write("signer.p12", try Self.fileBytes(original, password: "file-pw-123"))
        var registry = ProviderRegistry()
        try PKCS12CertificateProvider.register(
            in: &registry,
            parameters: [PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(directory.path("home"))]
        )
        let provider = try registry.makeProvider(.pkcs12)
        #expect(provider.providerID == .pkcs12)
        #expect(try provider.storedCertificate() == nil)  // nothing stored yet, and no prompt

        let identity = try await provider.initialize(options: [
            PKCS12CertificateProvider.ParameterKey.file: .string(path),
            PKCS12CertificateProvider.ParameterKey.password: .secret(Secret("file-pw-123")),
            PKCS12CertificateProvider.ParameterKey.alias: .string("работа"),
        ])
        #expect(identity.certificate == original.certificate)
        // Import inputs are not kept; the effective store password is.
        #expect(
            provider.parameters[PKCS12CertificateProvider.ParameterKey.file] == nil
                && provider.parameters[PKCS12CertificateProvider.ParameterKey.password] == nil
        )
        #expect(
            provider.parameters[PKCS12CertificateProvider.ParameterKey.storePassword] == .secret(Secret("file-pw-123"))
        )
        #expect(provider.parameters[PKCS12CertificateProvider.ParameterKey.alias] == .string("работа"))
        #expect(!provider.parameters.description.contains("file-pw-123"))

        let pkcs12 = try #require(provider as? PKCS12CertificateProvider)
        #expect(pkcs12.pkcs12OpenCount == 1)
        for index in 0..<20 {
            let stored = try #require(try provider.storedCertificate())
            #expect(stored.certificate == original.certificate)
            let document = Array("doc \(index)".utf8)
            let signature = try await stored.key.signature(
                for: document,
                digestAlgorithm: .sha256,
                scheme: stored.key.defaultScheme
            )
            // Checked against the certificate imported (not the stored key): each is a real signature.
            #expect(
                original.certificate.isValidSignature(
                    signature,
                    forDigest: DigestAlgorithm.sha256.hash(document),
                    digestAlgorithm: .sha256,
                    scheme: stored.key.defaultScheme
                ),
                "signature \(index) does not verify"
            )
        }
        #expect(pkcs12.pkcs12OpenCount == 1, "signing many documents must not reopen the PKCS#12")

        // The entry lives in the store the app chose and lists without a password.
        let store = PKCS12IdentityStore(directory: URL(fileURLWithPath: directory.path("home")))
        #expect(try store.list().map(\.alias) == ["работа"])

        try provider.deleteStoredCertificate()
        #expect(try provider.storedCertificate() == nil)
        try provider.deleteStoredCertificate()  // nothing stored: still succeeds
    }

    @Test("an app chooses the store: without storeDirectory or inMemory nothing is written, not even to $CERTSIGN_HOME")
    func noDefaultStore() async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=No Default Store", keyType: .p256)
        let path = try directory.write("signer.p12", try Self.fileBytes(original, password: "file-pw-123"))
        let home = directory.path("certsign-home")
        let provider = try PKCS12CertificateProvider(
            environment: ["CERTSIGN_HOME": home, "XDG_DATA_HOME": directory.path("xdg"), "HOME": directory.path("h")]
        )
        let refused = await expectError(.invalidParameter) {
            _ = try await provider.initialize(options: [
                PKCS12CertificateProvider.ParameterKey.file: .string(path),
                PKCS12CertificateProvider.ParameterKey.password: .secret(Secret("file-pw-123")),
            ])
        }
        #expect(refused?.reason.contains("storeDirectory") == true)
        expectError(.invalidParameter) { _ = try provider.storedCertificate() }
        for written in [home, directory.path("xdg"), directory.path("h")] {
            #expect(!FileManager.default.fileExists(atPath: written), "\(written) was created")
        }
        // In memory still works without a store.
        let identity = try await provider.initialize(options: [
            PKCS12CertificateProvider.ParameterKey.file: .string(path),
            PKCS12CertificateProvider.ParameterKey.password: .secret(Secret("file-pw-123")),
            PKCS12CertificateProvider.ParameterKey.inMemory: .boolean(true),
        ])
        #expect(identity.certificate == original.certificate)
    }

    @Test(
        "a fresh provider unlocks the stored identity once with the store password, and says when it is missing or wrong"
    )
    func storedCertificateNeedsPassword() async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Stored Only")
        let first = try PKCS12CertificateProvider(parameters: [
            PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(directory.url.path)
        ])
        _ = try await first.initialize(options: [
            PKCS12CertificateProvider.ParameterKey.data: .data(try Self.fileBytes(original, password: "file-pw-456")),
            PKCS12CertificateProvider.ParameterKey.password: .secret(Secret("file-pw-456")),
            PKCS12CertificateProvider.ParameterKey.storePassword: .secret(Secret("store-pw-1")),
        ])

        let locked = try PKCS12CertificateProvider(parameters: [
            PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(directory.url.path)
        ])
        expectError(.passwordRequired) { _ = try locked.storedCertificate() }
        try locked.setParameters([
            PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(directory.url.path),
            PKCS12CertificateProvider.ParameterKey.storePassword: .secret(Secret("wrong")),
        ])
        expectError(.wrongPassword) { _ = try locked.storedCertificate() }
        #expect(locked.pkcs12OpenCount == 1)  // the failed attempt
        try locked.setParameters([
            PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(directory.url.path),
            PKCS12CertificateProvider.ParameterKey.storePassword: .string("store-pw-1"),
        ])
        #expect(try locked.storedCertificate()?.certificate == original.certificate)
        #expect(try locked.storedCertificate()?.certificate == original.certificate)
        #expect(locked.pkcs12OpenCount == 2)
        if Fixtures.hasOpenSSL {
            try await Fixtures.signAndVerifyWithOpenSSL(try #require(try locked.storedCertificate()))
        }

        // Another process replacing the entry is noticed: the cache is keyed by the stored file.
        let replacement = try Fixtures.pki.issueLeaf(subject: "CN=Replacement")
        try PKCS12IdentityStore(directory: directory.url).import(
            replacement,
            alias: PKCS12CertificateProvider.defaultAlias,
            storePassword: Secret("store-pw-1"),
            replacingExisting: true
        )
        #expect(try locked.storedCertificate()?.certificate == replacement.certificate)
        #expect(locked.pkcs12OpenCount == 3)
    }

    @Test("many tasks asking at once share one unlock and all sign")
    func concurrentStoredCertificate() async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Concurrent")
        try PKCS12IdentityStore(directory: directory.url).import(
            original,
            alias: "default",
            storePassword: Secret("pw-store-1")
        )
        let provider = try PKCS12CertificateProvider(parameters: [
            PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(directory.url.path),
            PKCS12CertificateProvider.ParameterKey.storePassword: .secret(Secret("pw-store-1")),
        ])
        let key = try #require(original.key as? LocalSigningKey)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<16 {
                group.addTask {
                    let identity = try #require(try provider.storedCertificate())
                    let document = Array("document \(index)".utf8)
                    let signature = try await identity.key.signature(
                        for: document,
                        digestAlgorithm: .sha256,
                        scheme: .ecdsa
                    )
                    return key.isValidSignature(signature, for: document, digestAlgorithm: .sha256, scheme: .ecdsa)
                }
            }
            for try await valid in group { #expect(valid) }
        }
        #expect(provider.pkcs12OpenCount == 1)
    }

    @Test("password sources: env:NAME and file:PATH, kept as sources rather than secrets")
    func passwordSources() async throws {
        let directory = try TemporaryDirectory()
        let original = try Fixtures.pki.issueLeaf(subject: "CN=Password Sources")
        let bytes = try Self.fileBytes(original, password: "из окружения")
        let environment = ["P12_PASSWORD": "из окружения"]
        let provider = try PKCS12CertificateProvider(
            parameters: [PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(directory.path("home"))],
            environment: environment
        )
        _ = try await provider.initialize(options: [
            PKCS12CertificateProvider.ParameterKey.data: .data(bytes),
            PKCS12CertificateProvider.ParameterKey.passwordSource: .string("env:P12_PASSWORD"),
        ])
        #expect(
            provider.parameters[PKCS12CertificateProvider.ParameterKey.storePasswordSource]
                == .string("env:P12_PASSWORD")
        )
        #expect(
            provider.parameters[PKCS12CertificateProvider.ParameterKey.storePassword] == nil
                && provider.parameters[PKCS12CertificateProvider.ParameterKey.passwordSource] == nil
        )
        #expect(try provider.storedCertificate()?.certificate == original.certificate)

        // A fresh provider reads the store password from a file (first line, newline dropped).
        let passwordFile = try directory.write("store-password.txt", text: "из окружения\nsecond line ignored\n")
        let store = PKCS12CertificateProvider.ParameterKey.storeDirectory
        let fresh = try PKCS12CertificateProvider(
            parameters: [
                store: .string(directory.path("home")),
                PKCS12CertificateProvider.ParameterKey.storePasswordSource: .string("file:\(passwordFile)"),
            ],
            environment: environment
        )
        #expect(try fresh.storedCertificate()?.certificate == original.certificate)

        let unset = try PKCS12CertificateProvider(
            parameters: [
                store: .string(directory.path("home")),
                PKCS12CertificateProvider.ParameterKey.storePasswordSource: .string("env:NOT_SET_ANYWHERE"),
            ],
            environment: environment
        )
        expectError(.passwordRequired) { _ = try unset.storedCertificate() }
        let missingFile = try PKCS12CertificateProvider(
            parameters: [
                store: .string(directory.path("home")),
                PKCS12CertificateProvider.ParameterKey.storePasswordSource: .string("file:\(directory.path("none"))"),
            ],
            environment: environment
        )
        expectError(.fileSystem) { _ = try missingFile.storedCertificate() }
    }

    @Test("initialize maps file errors and stores nothing on failure")
    func initializeErrors() async throws {
        let directory = try TemporaryDirectory()
        let provider = try PKCS12CertificateProvider(parameters: [
            PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(directory.url.path)
        ])
        let bytes = try Self.fileBytes(try Fixtures.pki.issueLeaf(subject: "CN=Errors"), password: "right")
        await #expect(throws: CertificateProviderError(.wrongPassword, "")) {
            _ = try await provider.initialize(options: [
                PKCS12CertificateProvider.ParameterKey.data: .data(bytes),
                PKCS12CertificateProvider.ParameterKey.password: .string("wrong"),
            ])
        }
        await #expect(throws: CertificateProviderError(.malformedInput, "")) {
            _ = try await provider.initialize(options: [
                PKCS12CertificateProvider.ParameterKey.data: .data(Array(bytes.prefix(100))),
                PKCS12CertificateProvider.ParameterKey.password: .string("right"),
            ])
        }
        await #expect(throws: CertificateProviderError(.invalidParameter, "")) {
            _ = try await provider.initialize(options: [
                PKCS12CertificateProvider.ParameterKey.password: .string("right")
            ])
        }
        await #expect(throws: CertificateProviderError(.fileSystem, "")) {
            _ = try await provider.initialize(options: [
                PKCS12CertificateProvider.ParameterKey.file: .string(directory.path("absent.p12")),
                PKCS12CertificateProvider.ParameterKey.password: .string("right"),
            ])
        }
        #expect(try provider.storedCertificate() == nil)
        #expect(try PKCS12IdentityStore(directory: directory.url).list().isEmpty)
    }

    @Test(
        "a file with two keys: the alias parameter selects one",
        .enabled(if: Fixtures.hasKeytool, "keytool (JDK) is not installed")
    )
    func twoKeysThroughProvider() async throws {
        let directory = try TemporaryDirectory()
        let keystore = directory.path("two.p12")
        for alias in ["alpha", "beta"] {
            try Fixtures.run(
                "keytool",
                [
                    "-genkeypair", "-alias", alias, "-keyalg", "EC", "-keysize", "256", "-dname", "CN=\(alias)",
                    "-validity", "30", "-storetype", "PKCS12", "-keystore", keystore, "-storepass:env", "P",
                ],
                environment: ["P": "two-keys"]
            )
        }
        let provider = try PKCS12CertificateProvider(parameters: [
            PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(directory.path("store"))
        ])
        let options: ProviderParameters = [
            PKCS12CertificateProvider.ParameterKey.file: .string(keystore),
            PKCS12CertificateProvider.ParameterKey.password: .string("two-keys"),
        ]
        let ambiguous = await #expect(throws: CertificateProviderError.self) {
            _ = try await provider.initialize(options: options)
        }
        #expect(ambiguous?.code == .invalidParameter && ambiguous?.reason.contains("alpha") == true)
        let beta = try await provider.initialize(
            options: options.merging([PKCS12CertificateProvider.ParameterKey.alias: .string("beta")])
        )
        #expect(beta.certificate.subject == "CN=beta")
        let stored = try await provider.initialize(
            options: options.merging([
                PKCS12CertificateProvider.ParameterKey.alias: .string("main"),
                PKCS12CertificateProvider.ParameterKey.keyAlias: .string("alpha"),
            ])
        )
        #expect(stored.certificate.subject == "CN=alpha")
        #expect(try provider.store.list().map(\.alias) == ["beta", "main"])
    }

    @Test(
        "setParameters rejects bad values naming the key and keeps the old parameters",
        arguments: [
            (ProviderParameters([.init("colour"): .string("blue")]), "colour"),
            ([PKCS12CertificateProvider.ParameterKey.alias: .string("a/b")], "alias"),
            ([PKCS12CertificateProvider.ParameterKey.alias: .boolean(true)], "alias"),
            (
                [
                    PKCS12CertificateProvider.ParameterKey.file: .string("/tmp/x.p12"),
                    PKCS12CertificateProvider.ParameterKey.data: .data([1]),
                ], "data"
            ),
            ([PKCS12CertificateProvider.ParameterKey.data: .string("bytes")], "data"),
            ([PKCS12CertificateProvider.ParameterKey.storePassword: .string("")], "storePassword"),
            ([PKCS12CertificateProvider.ParameterKey.storePassword: .integer(1)], "storePassword"),
            ([PKCS12CertificateProvider.ParameterKey.storeDirectory: .string("/etc/hostname")], "storeDirectory"),
            ([PKCS12CertificateProvider.ParameterKey.keyAlias: .string(" ")], "keyAlias"),
            ([PKCS12CertificateProvider.ParameterKey.passwordSource: .string("pass:secret")], "passwordSource"),
            ([PKCS12CertificateProvider.ParameterKey.storePasswordSource: .string("env:")], "storePasswordSource"),
            (
                [
                    PKCS12CertificateProvider.ParameterKey.storePasswordSource: .string("env:X"),
                    PKCS12CertificateProvider.ParameterKey.storePassword: .string("y"),
                ],
                "storePasswordSource"
            ),
        ] as [(ProviderParameters, String)]
    )
    func setParametersValidation(parameters: ProviderParameters, key: String) throws {
        let provider = try PKCS12CertificateProvider(parameters: [
            PKCS12CertificateProvider.ParameterKey.alias: .string("kept")
        ])
        let error = expectError(.invalidParameter) { try provider.setParameters(parameters) }
        #expect(error?.reason.contains("'\(key)'") == true, "\(String(describing: error))")
        #expect(provider.parameters == [PKCS12CertificateProvider.ParameterKey.alias: .string("kept")])
    }
}
