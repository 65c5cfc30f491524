import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// A provider that implements nothing but its ID: every SAP-optional method uses the default.
private final class BareProvider: CertificateProvider {
    let providerID: ProviderID = "com.example.bare"
}

@Suite struct ProviderContractTests {
    static let pki = Result { try TestPKI() }

    @Test func defaultsThrowUnsupportedOperation() async throws {
        let provider = BareProvider()
        await #expect(throws: CertificateProviderError(.unsupportedOperation, "")) {
            try await provider.initialize(options: [:])
        }
        #expect(throws: CertificateProviderError(.unsupportedOperation, "")) { try provider.storedCertificate() }
        #expect(throws: CertificateProviderError(.unsupportedOperation, "")) { try provider.deleteStoredCertificate() }
        #expect(throws: CertificateProviderError(.unsupportedOperation, "")) {
            try provider.setParameters(["url": .string("x")])
        }
        #expect(provider.parameters.isEmpty)
        let error = try #require(throws: CertificateProviderError.self) { try provider.storedCertificate() }
        #expect(error.reason.contains("com.example.bare"))
    }

    @Test func inMemoryProviderHonoursTheSAPContract() async throws {
        let identity = try Self.pki.get().issueLeaf(subject: "CN=Contract Signer")
        let provider = InMemoryCertificateProvider(id: "test.contract", identity: identity)
        // Nothing stored yet: nil, never a prompt or an error.
        #expect(try provider.storedCertificate() == nil)
        // Deleting when nothing is stored succeeds.
        try provider.deleteStoredCertificate()
        // initialize acquires and stores; storedCertificate returns the same identity.
        let acquired = try await provider.initialize(options: ["url": .string("https://example.invalid")])
        #expect(acquired.certificate == identity.certificate)
        let stored = try #require(try provider.storedCertificate())
        #expect(stored.certificate == acquired.certificate)
        #expect(try provider.parameters.string(.url) == "https://example.invalid")
        // delete removes it, and deleting again still succeeds.
        try provider.deleteStoredCertificate()
        #expect(try provider.storedCertificate() == nil)
        try provider.deleteStoredCertificate()
        #expect(provider.initializeCount == 1)
    }

    @Test func parametersAreValidatedAndKeptOnError() async throws {
        let identity = try Self.pki.get().issueLeaf(subject: "CN=Params")
        let provider = InMemoryCertificateProvider(
            id: "test.params",
            acceptedParameters: [.url, .keySize],
            requiredParameters: [.url],
            source: { _ in identity }
        )
        try provider.setParameters([.keySize: .integer(2048)])
        do {
            try provider.setParameters(["bogus": .string("1")])
            Issue.record("setParameters accepted an unknown key")
        } catch let error as CertificateProviderError {
            #expect(error.code == .invalidParameter)
            #expect(error.reason.contains("bogus"))
        }
        #expect(try provider.parameters.integer(.keySize) == 2048)
        await #expect(throws: CertificateProviderError(.invalidParameter, "")) {
            try await provider.initialize(options: [:])
        }
        _ = try await provider.initialize(options: [.url: .url(URL(string: "https://dss.example")!)])
        #expect(try provider.storedCertificate() != nil)
    }

    @Test func typedParameterAccess() throws {
        let parameters: ProviderParameters = [
            "count": .string("12831"), "flag": .string("yes"), "url": .string("https://h/x"),
            "pin": .secret(Secret("123")), "bad": .string("twelve"), "bytes": .data([1, 2]),
        ]
        #expect(try parameters.integer("count") == 12831)
        #expect(try parameters.boolean("flag") == true)
        #expect(try parameters.url(.url)?.host == "h")
        #expect(try parameters.secret("pin") == Secret("123"))
        #expect(try parameters.integer("absent") == nil)
        #expect(throws: CertificateProviderError(.invalidParameter, "")) { try parameters.integer("bad") }
        #expect(throws: CertificateProviderError(.invalidParameter, "")) { try parameters.string("bytes") }
        #expect(throws: CertificateProviderError(.invalidParameter, "")) { try parameters.requiredString("absent") }
        #expect(try parameters.data("bytes") == [1, 2])
        let merged = parameters.merging(["count": .integer(1)])
        #expect(try merged.integer("count") == 1)
    }

    @Test func scriptedProviderFailsAndDelaysOnCommand() async throws {
        let identity = try Self.pki.get().issueLeaf(subject: "CN=Scripted")
        let provider = ScriptedCertificateProvider(
            identity: identity,
            history: [RemoteSignatureRecord(id: "121", summary: "cell")]
        )
        provider.script(.initialize, .fail(CertificateProviderError(.network, "offline")), .succeed)
        await #expect(throws: CertificateProviderError(.network, "")) { try await provider.initialize(options: [:]) }
        _ = try await provider.initialize(options: [:])
        #expect(try provider.storedCertificate() != nil)
        provider.script(
            .storedCertificate,
            .delay(.milliseconds(20), then: .fail(CertificateProviderError(.storeCorrupted, "x")))
        )
        #expect(throws: CertificateProviderError(.storeCorrupted, "")) { try provider.storedCertificate() }
        // A delayed async call honours cancellation.
        provider.script(.signatures, .delay(.seconds(30), then: .succeed))
        let task = Task { try await provider.signatures() }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        try await provider.removeSignature(id: "121")
        await #expect(throws: CertificateProviderError(.notStored, "")) {
            try await provider.removeSignature(id: "121")
        }
        #expect(provider.calls.first == .initialize)
        #expect(provider.calls.filter { $0 == .initialize }.count == 2)
    }
}

@Suite struct ProviderRegistryTests {
    @Test func registerLookUpAndSwap() throws {
        let identity = try TestPKI().issueLeaf(subject: "CN=Registry")
        var registry = ProviderRegistry()
        try registry.register("com.example.one", description: "first") {
            InMemoryCertificateProvider(id: "com.example.one", identity: identity)
        }
        try registry.register(.pkcs12, description: "stand-in for PKCS#12") {
            InMemoryCertificateProvider(id: .pkcs12, identity: identity)
        }
        #expect(registry.registeredIDs == [.init("com.example.one"), .pkcs12])
        #expect(registry.registrationsByID.map(\.description) == ["first", "stand-in for PKCS#12"])
        let provider = try registry.makeProvider(.pkcs12)
        #expect(provider.providerID == .pkcs12)
        #expect(provider is InMemoryCertificateProvider)
        // Each call makes a fresh instance.
        #expect(try registry.makeProvider(.pkcs12) !== provider)
    }

    @Test func duplicatesAreRejected() throws {
        let identity = try TestPKI().issueLeaf(subject: "CN=Dup")
        var registry = ProviderRegistry()
        try registry.register("dup", description: "a") { InMemoryCertificateProvider(id: "dup", identity: identity) }
        #expect(throws: CertificateProviderError(.providerAlreadyRegistered, "")) {
            try registry.register("dup", description: "b") {
                InMemoryCertificateProvider(id: "dup", identity: identity)
            }
        }
        #expect(registry.registrationsByID.first?.description == "a")
    }

    @Test func notFoundNamesTheKnownIDs() throws {
        var registry = ProviderRegistry()
        #expect(throws: CertificateProviderError(.providerNotFound, "")) { try registry.makeProvider("nope") }
        try registry.register("known.one", description: "x") {
            ScriptedCertificateProvider(id: "known.one", identity: try TestPKI().issueLeaf(subject: "CN=x"))
        }
        do {
            _ = try registry.makeProvider("nope")
            Issue.record("expected providerNotFound")
        } catch let error as CertificateProviderError {
            #expect(error.code == .providerNotFound)
            #expect(error.reason.contains("nope"))
            #expect(error.reason.contains("known.one"))
        }
    }

    @Test func factoryMustReportItsID() throws {
        let identity = try TestPKI().issueLeaf(subject: "CN=Mismatch")
        var registry = ProviderRegistry()
        try registry.register("a", description: "x") { InMemoryCertificateProvider(id: "b", identity: identity) }
        #expect(throws: CertificateProviderError(.invalidParameter, "")) { try registry.makeProvider("a") }
    }
}
