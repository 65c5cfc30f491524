import CertificateProviders
import CertificateProvidersTesting
import CryptoProDSSProvider
import EmulatorKit
import Foundation
import HTTPClient
import TestSupport
import Testing

/// Through the library: a session serves only the credentials it was made
/// with (in memory and from the cache), and a re-issued certificate is picked up by
/// `refreshSelectedCertificate()`.
@Suite struct CryptoProSessionBindingTests {
    static func parameters(_ url: URL, password: String, store: String? = nil) -> ProviderParameters {
        var parameters = ProviderParameters([
            CryptoProDSSProvider.ParameterKey.url: .url(url),
            CryptoProDSSProvider.ParameterKey.username: .string(StandardSeed.username),
            CryptoProDSSProvider.ParameterKey.password: .secret(Secret(password)),
            CryptoProDSSProvider.ParameterKey.certificateID: .integer(StandardSeed.secondCertificateID),
        ])
        if let store { parameters[CryptoProDSSProvider.ParameterKey.storeDirectory] = .string(store) }
        return parameters
    }

    @Test("in memory: setParameters with another password drops the session, so signing logs in and fails")
    func inMemory() async throws {
        try await withEmulator { _, url in
            let provider = try CryptoProDSSProvider(parameters: Self.parameters(url, password: StandardSeed.password))
            _ = try await provider.initialize(options: [:])
            #expect(try provider.storedCertificate() != nil)
            try provider.setParameters(Self.parameters(url, password: "wrong"))
            #expect(try provider.storedCertificate() == nil)
            await expectError(.authenticationFailed) {
                _ = try await provider.signDocument(DocumentSigningRequest(payload: .content(Array("x".utf8))))
            }
            // The right password again: a fresh login that works.
            try provider.setParameters(Self.parameters(url, password: StandardSeed.password))
            let cms = try await provider.signDocument(DocumentSigningRequest(payload: .content(Array("x".utf8))))
            #expect(!cms.isEmpty)
        }
    }

    @Test("from the cache: a new provider with another password gets no identity; with none or the same, it does")
    func fromTheCache() async throws {
        try await withEmulator { emulator, url in
            let directory = try TemporaryDirectory()
            let store = directory.path("store")
            let first = try CryptoProDSSProvider(
                parameters: Self.parameters(url, password: StandardSeed.password, store: store)
            )
            _ = try await first.initialize(options: [:])
            emulator.clearReceivedRequests()
            let wrong = try CryptoProDSSProvider(parameters: Self.parameters(url, password: "wrong", store: store))
            #expect(try wrong.storedCertificate() == nil)
            let same = try CryptoProDSSProvider(
                parameters: Self.parameters(url, password: StandardSeed.password, store: store)
            )
            #expect(try same.storedCertificate() != nil)
            var withoutPassword = Self.parameters(url, password: "", store: store)
            withoutPassword[CryptoProDSSProvider.ParameterKey.password] = nil
            #expect(try CryptoProDSSProvider(parameters: withoutPassword).storedCertificate() != nil)
            #expect(emulator.receivedRequests.isEmpty, "the checks are local")
        }
    }

    @Test("refreshSelectedCertificate: unchanged on the same server; after a restart it selects the re-issued one")
    func refresh() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.path("store")
        let first = try DSSEmulator()
        let url = try first.start()
        let provider = try CryptoProDSSProvider(
            parameters: Self.parameters(url, password: StandardSeed.password, store: store)
        )
        let before = try await provider.initialize(options: [:])
        let same = try await provider.refreshSelectedCertificate()
        #expect(!same.changed && same.current == before.certificate)
        first.stop()

        let second = try DSSEmulator(configuration: .init(port: UInt16(try #require(url.port))))
        _ = try second.start()
        defer { second.stop() }
        let refresh = try await provider.refreshSelectedCertificate()
        #expect(refresh.changed && refresh.previous == before.certificate)
        #expect(refresh.certificateID == String(StandardSeed.secondCertificateID))
        #expect(try provider.storedCertificate()?.certificate == refresh.current)
        // The cache holds the new certificate: a new provider (process) starts from it.
        let next = try CryptoProDSSProvider(
            parameters: Self.parameters(url, password: StandardSeed.password, store: store)
        )
        #expect(try next.storedCertificate()?.certificate == refresh.current)
        let document = Array("Акт".utf8)
        let cms = try await next.signDocument(DocumentSigningRequest(payload: .content(document)))
        try opensslVerify(cms, emulator: second, cades: true, detachedContent: document)
    }
}
