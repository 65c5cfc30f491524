import CertificateProviders
import CertificateProvidersTesting
import CryptoProDSSProvider
import EmulatorKit
import FMPDSSProvider
import Foundation
import HTTPClient
import RemoteProviderSupport
import TestSupport
import Testing

/// `trustedCAFileOnly`, a parameter added by one declaration in ``RemoteProviderParameters``: the
/// remote providers' schemas, validation and help take it up without another edit; the transport
/// the providers make uses it.
@Suite struct TrustedCAFileOnlyTests {
    @Test(
        "trustedCAFileOnly makes the providers' transport trust only trustedCAFile; default: added to the system store"
    )
    func replacesTheSystemStore() throws {
        let directory = try TemporaryDirectory()
        let caFile = try directory.write("ca.pem", text: try TestPKI().root.certificate.pemRepresentation)
        func replaces(_ only: ProviderParameters.Value?) throws -> Bool? {
            var parameters: ProviderParameters = [RemoteTLSParameters.trustedCAFile: .string(caFile)]
            parameters[RemoteProviderParameters.trustedCAFileOnly.key] = only
            let transport = try RemoteTLSParameters.transport(
                for: parameters,
                endpointPolicy: .default,
                given: nil,
                identityLookup: nil
            )
            return (transport as? CurlTransport)?.configuration.trustedCAFileReplacesSystemStore
        }
        #expect(try replaces(nil) == false)
        #expect(try replaces(.string("true")) == true)
        #expect(try replaces(.boolean(false)) == false)
    }

    @Test("every remote provider declares it and refuses a value that is not a boolean, with the schema's message")
    func declaredOnceForAll() throws {
        for schema in [FMPDSSProvider.schema, CryptoProDSSProvider.schema] {
            #expect(schema[RemoteProviderParameters.trustedCAFileOnly.key]?.type == .boolean)
            #expect(schema.table().contains("trustedCAFileOnly"))
        }
        let provider = try CryptoProDSSProvider()
        do {
            try provider.setParameters([RemoteProviderParameters.trustedCAFileOnly.key: .string("maybe")])
            Issue.record("accepted")
        } catch let error as CertificateProviderError {
            #expect(error.reason == "parameter 'trustedCAFileOnly' must be true or false, not 'maybe'")
        }
    }

    @Test("a CryptoPro login over HTTPS trusting only the emulator's CA works (the pinned CA is the server's)")
    func pinnedRoundTrip() async throws {
        let emulator = try DSSEmulator(configuration: .init(host: "127.0.0.1", tls: .init()), seed: sharedSeed)
        let base = try emulator.start()
        defer { emulator.stop() }
        let directory = try TemporaryDirectory()
        let caFile = try directory.write("emulator-ca.pem", text: emulator.certificateAuthorityPEM)
        let provider = try CryptoProDSSProvider()
        try provider.setParameters([
            CryptoProDSSProvider.ParameterKey.url: .url(base),
            CryptoProDSSProvider.ParameterKey.username: .string(StandardSeed.username),
            CryptoProDSSProvider.ParameterKey.password: .secret(Secret(StandardSeed.password)),
            RemoteTLSParameters.trustedCAFile: .string(caFile),
            RemoteProviderParameters.trustedCAFileOnly.key: .string("true"),
        ])
        #expect(base.scheme == "https")
        let identity = try await provider.initialize(options: [:])
        #expect(!identity.certificate.subject.isEmpty)
    }
}
