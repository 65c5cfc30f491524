import CertificateProviders
import CertificateProvidersTesting
import Foundation
import PKCS12Provider
import SignatureJournal
import Signing
import TestSupport
import Testing

@Suite("SigningCoordinator with the PKCS#12 provider: parameters that name a stored identity use it")
struct CoordinatorStoredIdentityTests {
    @Test("sign(parameters: [alias, storePassword]) signs with the identity stored under that alias, no file needed")
    func storedIdentityByParameters() async throws {
        let directory = try TemporaryDirectory()
        let store = PKCS12IdentityStore(directory: directory.url.appendingPathComponent("ids"))
        let stored = try Fixtures.pki.issueLeaf(subject: "CN=Stored Signer,O=ООО Ромашка", keyType: .p256)
        let other = try Fixtures.pki.issueLeaf(subject: "CN=Default Alias,O=ООО Ромашка", keyType: .p256)
        try store.import(stored, alias: "work", storePassword: Secret("store-pass-1"), options: IdentityStoreTests.fast)
        try store.import(
            other,
            alias: "default",
            storePassword: Secret("store-pass-2"),
            options: IdentityStoreTests.fast
        )

        var registry = ProviderRegistry()
        let base: ProviderParameters = [
            PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(store.directory.path)
        ]
        try registry.register(.pkcs12, description: "identity store") {
            try PKCS12CertificateProvider(parameters: base)
        }
        let coordinator = SigningCoordinator(
            registry: registry,
            journal: try SignatureJournal(url: directory.url.appendingPathComponent("journal.sqlite"))
        )
        let document = Array("Договор № 7\n".utf8)
        let result = try await coordinator.sign(
            document: .bytes(document, name: "contract.txt"),
            provider: .pkcs12,
            parameters: [
                PKCS12CertificateProvider.ParameterKey.alias: .string("work"),
                PKCS12CertificateProvider.ParameterKey.storePassword: .secret(Secret("store-pass-1")),
            ]
        )
        #expect(result.signerCertificate == stored.certificate)
        let verified = try OpenSSLCMS.verify(
            result.signature,
            content: document,
            trust: [Fixtures.pki.root.certificate],
            cades: true
        )
        #expect(verified.succeeded, "\(verified.errorOutput)")
    }
}
