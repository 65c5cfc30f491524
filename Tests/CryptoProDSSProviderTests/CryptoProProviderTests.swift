import CertificateProviders
import CertificateProvidersTesting
import CryptoProDSSProvider
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import RemoteProviderSupport
import TestSupport
import Testing

@Suite("CryptoProDSSProvider against the emulator")
struct CryptoProProviderTests {
    func parameters(_ url: URL, _ extra: ProviderParameters = [:]) -> ProviderParameters {
        ProviderParameters([
            CryptoProDSSProvider.ParameterKey.url: .url(url),
            CryptoProDSSProvider.ParameterKey.username: .string(StandardSeed.username),
            CryptoProDSSProvider.ParameterKey.password: .secret(Secret(StandardSeed.password)),
            CryptoProDSSProvider.ParameterKey.pin: .secret(Secret(StandardSeed.certificatePIN)),
        ]).merging(extra)
    }

    @Test("a bad parameter is refused alike at init, setParameters and initialize(options:)")
    func validationMoment() async throws {
        // dssPassword is an FMP key: unknown here.
        let reason = try await expectRefusedAtEveryMoment(["dssPassword": .secret(Secret("x"))]) {
            try CryptoProDSSProvider(parameters: $0)
        }
        #expect(
            reason?.hasPrefix("parameter 'dssPassword' is not known to the cryptopro-dss provider (it takes: ") == true
        )
        #expect(reason?.contains("username") == true)
    }

    @Test("certificate selection: by id, 0 = default, none = default, by friendly name, by subject CN")
    func selection() async throws {
        try await withEmulator(.faults) { _, url in
            let leonid = sharedSeed.users[0].certificates.map(\.identity.certificate)
            let cases: [(ProviderParameters, Certificate)] = [
                ([CryptoProDSSProvider.ParameterKey.certificateID: .integer(12832)], leonid[1]),
                ([CryptoProDSSProvider.ParameterKey.certificateID: .string("0")], leonid[0]),
                ([:], leonid[0]),
                ([CryptoProDSSProvider.ParameterKey.certificate: .string("Леонид Тестов (RSA)")], leonid[1]),
                ([CryptoProDSSProvider.ParameterKey.certificate: .string(leonid[1].subject)], leonid[1]),
            ]
            for (extra, expected) in cases {
                let provider = try CryptoProDSSProvider(parameters: parameters(url))
                let identity = try await provider.initialize(options: extra)
                #expect(identity.certificate == expected, "\(extra)")
                #expect(identity.key.matches(expected))
                #expect(provider.providerID == .cryptoProDSS)
            }
        }
    }

    @Test("an unknown certificate id or name is invalidParameter listing the user's certificates")
    func unknownCertificate() async throws {
        try await withEmulator(.faults) { _, url in
            let provider = try CryptoProDSSProvider(parameters: parameters(url))
            let byID = await expectError(.invalidParameter) {
                try await provider.initialize(options: [CryptoProDSSProvider.ParameterKey.certificateID: .integer(999)])
            }
            #expect(byID?.reason.contains("certificate 999 is not among") == true)
            #expect(byID?.reason.contains(#"12831 "Леонид Тестов" (default)"#) == true)
            #expect(byID?.reason.contains("12832") == true)
            let byName = await expectError(.invalidParameter) {
                try await provider.initialize(options: [CryptoProDSSProvider.ParameterKey.certificate: .string("Мария")]
                )
            }
            #expect(byName?.reason.contains("no CryptoPro DSS certificate is named 'Мария'") == true)
            let stored = try provider.storedCertificate()
            #expect(stored == nil)
        }
    }

    @Test("parameters: unknown keys, wrong types, missing url and insecure http are invalidParameter")
    func parameterChecks() async throws {
        let provider = try CryptoProDSSProvider()
        #expect(throws: CertificateProviderError.invalidParameter("")) {
            try provider.setParameters(["dssPassword": .string("x")])
        }
        #expect(throws: CertificateProviderError.invalidParameter("")) {
            try provider.setParameters([CryptoProDSSProvider.ParameterKey.certificateID: .string("abc")])
        }
        #expect(throws: CertificateProviderError.invalidParameter("")) {
            try provider.setParameters([CryptoProDSSProvider.ParameterKey.certificateID: .integer(-1)])
        }
        await expectError(.invalidParameter) {
            try await provider.initialize(options: [CryptoProDSSProvider.ParameterKey.username: .string("Leonid")])
        }
        let insecure = await expectError(.invalidParameter) {
            try await provider.initialize(options: [
                CryptoProDSSProvider.ParameterKey.url: .string("http://dss.example.com/"),
                CryptoProDSSProvider.ParameterKey.username: .string("Leonid"),
                CryptoProDSSProvider.ParameterKey.password: .secret(Secret("123123")),
            ])
        }
        #expect(insecure?.reason.contains("clear-text") == true)
        // 15 of its own + trustedCAFile, trustedCAFileOnly, clientIdentity, clientIdentityPassword
        #expect(CryptoProDSSProvider.ParameterKey.all.count == 19)
    }

    @Test("wrong password is authenticationFailed from initialize")
    func wrongPassword() async throws {
        try await withEmulator(.faults) { _, url in
            let provider = try CryptoProDSSProvider(
                parameters: parameters(url, [CryptoProDSSProvider.ParameterKey.password: .secret(Secret("nope"))])
            )
            await expectError(.authenticationFailed) { try await provider.initialize(options: [:]) }
        }
    }

    @Test("signDocument: CAdES-BES detached/attached, CMS, digest payload; every signature verifies")
    func signDocument() async throws {
        try await withEmulator(.init(faultsEnabled: true, requestLogKeepsSecrets: true)) { emulator, url in
            let provider = try CryptoProDSSProvider(parameters: parameters(url))
            _ = try await provider.initialize(options: [:])
            let detached = try await provider.signDocument(DocumentSigningRequest(payload: .content(document)))
            try opensslVerify(detached, emulator: emulator, cades: true, detachedContent: document)
            let attached = try await provider.signDocument(
                DocumentSigningRequest(payload: .content(document), isDetached: false)
            )
            #expect(try opensslVerify(attached, emulator: emulator, cades: true) == document)
            let cms = try await provider.signDocument(DocumentSigningRequest(payload: .content(document), format: .cms))
            try opensslVerify(cms, emulator: emulator, cades: false, detachedContent: document)
            let digest = try await provider.signDocument(
                DocumentSigningRequest(payload: .digest(DigestAlgorithm.sha384.hash(document), .sha384))
            )
            try opensslVerify(digest, emulator: emulator, cades: true, detachedContent: document)

            let bodies = requests(emulator, endingWith: "/documents").compactMap(\.json)
            #expect(bodies.map { $0["Signature"]?["CertificateId"] } == Array(repeating: .integer(12831), count: 4))
            #expect(bodies.map { $0["Signature"]?["PinCode"] } == Array(repeating: "123", count: 4))
            #expect(bodies.map { $0["Signature"]?["Type"] } == ["CAdES", "CAdES", "CMS", "CAdES"])
            #expect(bodies.map { $0["Signature"]?["Parameters"]?["IsDetached"] } == ["True", "False", "True", "True"])
            #expect(bodies.map { $0["Signature"]?["Parameters"]?["Hash"] } == ["False", "False", "False", "True"])

            await expectError(.unsupportedAlgorithm) {
                try await provider.signDocument(
                    DocumentSigningRequest(payload: .content(document), format: SignatureFormat("xades"))
                )
            }
            await expectError(.unsupportedAlgorithm) {
                try await provider.signDocument(
                    DocumentSigningRequest(payload: .content(document), digestAlgorithm: .sha512)
                )
            }
            await expectError(.invalidParameter) {
                try await provider.signDocument(DocumentSigningRequest(payload: .digest([1, 2], .sha256)))
            }
            await expectError(.invalidParameter) {
                try await provider.signDocument(
                    DocumentSigningRequest(
                        payload: .digest(DigestAlgorithm.sha256.hash(document), .sha256),
                        isDetached: false
                    )
                )
            }
        }
    }

    @Test("signDocument with a wrong PIN is wrongPassword; without a session it initializes from the parameters")
    func signDocumentErrors() async throws {
        try await withEmulator(.faults) { emulator, url in
            let provider = try CryptoProDSSProvider(
                parameters: parameters(url, [CryptoProDSSProvider.ParameterKey.pin: .secret(Secret("000"))])
            )
            await expectError(.wrongPassword) {
                try await provider.signDocument(DocumentSigningRequest(payload: .content(document)))
            }
            #expect(requests(emulator, endingWith: "/oauth/token").count == 1)
            try provider.setParameters(
                parameters(url, [CryptoProDSSProvider.ParameterKey.certificateID: .integer(12832)])
            )
            try provider.deleteStoredCertificate()
            let cms = try await provider.signDocument(DocumentSigningRequest(payload: .content(document)))
            #expect(try signerCertificate(cms) == sharedSeed.users[0].certificates[1].identity.certificate)
        }
    }

    @Test("a PIN given only in initialize's options is used by signDocument")
    func pinFromOptions() async throws {
        try await withEmulator(.faults) { emulator, url in
            let provider = try CryptoProDSSProvider(parameters: [CryptoProDSSProvider.ParameterKey.url: .url(url)])
            _ = try await provider.initialize(options: parameters(url))
            #expect(try provider.parameters.secret(CryptoProDSSProvider.ParameterKey.pin) == nil)
            let cms = try await provider.signDocument(DocumentSigningRequest(payload: .content(document)))
            try opensslVerify(cms, emulator: emulator, cades: true, detachedContent: document)
        }
    }

    @Test("the remote key refuses raw signing with a clear unsupportedOperation")
    func remoteKey() async throws {
        try await withEmulator(.faults) { _, url in
            let identity = try await CryptoProDSSProvider(parameters: parameters(url)).initialize(options: [:])
            let error = await expectError(.unsupportedOperation) {
                try await identity.key.signature(
                    forDigest: DigestAlgorithm.sha256.hash(document),
                    digestAlgorithm: .sha256,
                    scheme: .ecdsa
                )
            }
            #expect(error?.reason.contains("signDocument") == true)
            #expect(identity.key.publicKeyAlgorithm == .ecP256)
        }
    }

    @Test("storeDirectory: a 0600 cache lets a new provider return the identity without any request; delete forgets it")
    func cache() async throws {
        try await withEmulator(.faults) { emulator, url in
            let directory = try TemporaryDirectory()
            let store = directory.path("store")
            let withStore = parameters(
                url,
                [
                    CryptoProDSSProvider.ParameterKey.storeDirectory: .string(store),
                    CryptoProDSSProvider.ParameterKey.certificateID: .integer(12832),
                ]
            )
            let first = try CryptoProDSSProvider(parameters: withStore)
            let identity = try await first.initialize(options: [:])
            let file = store + "/cryptopro-dss-session.json"
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: file)), as: UTF8.self)
            #expect(!text.contains("123123"))
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: store).sorted() == [
                    ".cryptopro-dss-session.lock", "cryptopro-dss-session.json",
                ]
            )
            #expect(!String(describing: first.parameters).contains("123123"))

            // A new provider (a new process) with the same parameters: no network call.
            emulator.clearReceivedRequests()
            let second = try CryptoProDSSProvider(parameters: withStore)
            let cached = try #require(try second.storedCertificate())
            #expect(cached.certificate == identity.certificate)
            #expect(emulator.receivedRequests.isEmpty)
            // It signs with the cached token: one request, no login.
            let cms = try await second.signDocument(DocumentSigningRequest(payload: .content(document)))
            try opensslVerify(cms, emulator: emulator, cades: true, detachedContent: document)
            #expect(emulator.receivedRequests.map(\.path) == ["/SignServer/rest/api/documents"])

            // Another user or URL does not get the cached identity.
            let other = try CryptoProDSSProvider(
                parameters: withStore.merging([CryptoProDSSProvider.ParameterKey.username: .string("Maria")])
            )
            #expect(try other.storedCertificate()?.certificate == nil)

            // Forgetting removes the file; a fresh provider finds nothing.
            try second.deleteStoredCertificate()
            #expect(!FileManager.default.fileExists(atPath: file))
            #expect(try CryptoProDSSProvider(parameters: withStore).storedCertificate()?.certificate == nil)
            try second.deleteStoredCertificate()
        }
    }

    @Test("an expired cached token is not used; a renewed token is written back to the cache")
    func cacheExpiry() async throws {
        // The provider reads the time from a clock the test sets, so the token is looked at exactly 31 s
        // and 20 s before its expiry however long the machine took to get there.
        try await withEmulator(.init(faultsEnabled: true, accessTokenLifetime: 600)) { emulator, url in
            let directory = try TemporaryDirectory()
            let store = directory.path("store")
            let withStore = parameters(url, [CryptoProDSSProvider.ParameterKey.storeDirectory: .string(store)])
            let clock = ManualClock()
            func provider() throws -> CryptoProDSSProvider {
                try CryptoProDSSProvider(parameters: withStore, additionalHeaders: [], clock: clock.sessionClock)
            }
            _ = try await provider().initialize(options: [:])
            let file = store + "/cryptopro-dss-session.json"
            let entry = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
            )
            let expiresAt = Date(timeIntervalSince1970: try #require(entry["expiresAt"] as? Double))
            // The expiry is the login's moment by the provider's clock plus the server's 600 s.
            #expect(abs(expiresAt.timeIntervalSince(clock.now) - 600) < 1)
            // 31 s left is outside the 30 s margin: reused.
            clock.set(expiresAt.addingTimeInterval(-31))
            #expect(try provider().storedCertificate()?.certificate != nil)
            // 20 s left is inside the 30 s margin: not valid for reuse.
            clock.set(expiresAt.addingTimeInterval(-20))
            #expect(try provider().storedCertificate()?.certificate == nil)
        }
        try await withEmulator(.faults) { emulator, url in
            let directory = try TemporaryDirectory()
            let store = directory.path("store")
            let withStore = parameters(url, [CryptoProDSSProvider.ParameterKey.storeDirectory: .string(store)])
            _ = try await CryptoProDSSProvider(parameters: withStore).initialize(options: [:])
            let file = URL(fileURLWithPath: store + "/cryptopro-dss-session.json")
            let before = try Data(contentsOf: file)
            emulator.expireAccessTokens()
            let second = try CryptoProDSSProvider(parameters: withStore)
            #expect(try second.storedCertificate()?.certificate != nil)
            let cms = try await second.signDocument(DocumentSigningRequest(payload: .content(document)))
            try opensslVerify(cms, emulator: emulator, cades: true, detachedContent: document)
            #expect(try Data(contentsOf: file) != before)
            // The rewritten token works for a third provider without login.
            emulator.clearReceivedRequests()
            let third = try CryptoProDSSProvider(parameters: withStore)
            _ = try #require(try third.storedCertificate())
            _ = try await third.certificates()
            #expect(emulator.receivedRequests.map(\.path) == ["/SignServer/rest/api/certificates"])
        }
    }

    @Test("a cache file that is not ours is storeCorrupted")
    func corruptCache() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("cryptopro-dss-session.json", Data("{\"hello\":1}".utf8))
        #expect(chmod(path, 0o600) == 0)  // private, so it is read (a readable one is ignored)
        let provider = try CryptoProDSSProvider(parameters: [
            CryptoProDSSProvider.ParameterKey.storeDirectory: .string(directory.url.path)
        ])
        #expect(throws: CertificateProviderError(.storeCorrupted, "")) { try provider.storedCertificate() }
    }
}
