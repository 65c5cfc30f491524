import AWSKMSProvider
import CSCProvider
import CertificateProviders
import CryptoProDSSProvider
import FMPDSSProvider
import TestSupport
import Testing
import VaultTransitProvider

/// The remote providers are built on the package-only RemoteProviderSupport module, which this file
/// does not import (as an app would not). Called on the concrete types, `parameters`,
/// `setParameters(_:)`, `storedCertificate()` and `deleteStoredCertificate()` must be the
/// providers' own, not `CertificateProvider`'s public defaults (which keep no parameters and throw
/// `.unsupportedOperation`). That is why each provider declares them itself over its
/// `RemoteProviderState` instead of taking them from a `RemoteProvider` extension: moved there, the
/// calls below compile and reach those defaults (tried: each test here then fails).
@Suite struct RemoteProviderMemberTests {
    @Test func cscAnswersWithItsOwnMembers() throws {
        let provider = try CSCProvider(parameters: [.url: .string("https://one.example/")])
        try Self.checkParameters(.url, provider, { provider.parameters }, provider.setParameters)
        #expect(try provider.storedCertificate() == nil)
        try provider.deleteStoredCertificate()
    }

    @Test func vaultTransitAnswersWithItsOwnMembers() throws {
        let provider = try VaultTransitProvider(parameters: [.url: .string("https://one.example/")])
        try Self.checkParameters(.url, provider, { provider.parameters }, provider.setParameters)
        #expect(try provider.storedCertificate() == nil)
        try provider.deleteStoredCertificate()
    }

    @Test func awsKMSAnswersWithItsOwnMembers() throws {
        let key = AWSKMSProvider.ParameterKey.endpointURL
        let provider = try AWSKMSProvider(parameters: [key: .string("https://one.example/")])
        try Self.checkParameters(key, provider, { provider.parameters }, provider.setParameters)
        #expect(try provider.storedCertificate() == nil)
        try provider.deleteStoredCertificate()
    }

    @Test func fmpAndCryptoProAnswerWithTheirOwnParameters() throws {
        let fmp = try FMPDSSProvider(parameters: [.url: .string("https://one.example/")])
        try Self.checkParameters(.url, fmp, { fmp.parameters }, fmp.setParameters)
        let cryptoPro = try CryptoProDSSProvider(parameters: [.url: .string("https://one.example/")])
        try Self.checkParameters(.url, cryptoPro, { cryptoPro.parameters }, cryptoPro.setParameters)
    }

    /// The concrete type's `parameters` holds the URL it was made with, then the one `setParameters`
    /// gave it, and agrees with the provider behind `any CertificateProvider`.
    private static func checkParameters(
        _ key: ProviderParameters.Key,
        _ provider: any CertificateProvider,
        _ parameters: () -> ProviderParameters,
        _ set: (ProviderParameters) throws -> Void
    ) throws {
        #expect(try parameters().string(key) == "https://one.example/")
        try set([key: .string("https://two.example/")])
        #expect(try parameters().string(key) == "https://two.example/")
        #expect(provider.parameters == parameters())
    }
}
