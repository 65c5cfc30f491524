import AWSKMSProvider
import CSCProvider
import CertificateProviders
import CryptoProDSSProvider
import FMPDSSProvider
import TestSupport
import Testing
import VaultTransitProvider

/// The remote providers are built on RemoteProviderSupport, which this file does not import (as an
/// app would not; member import visibility is on, so that module's extension members are out of
/// reach here). Called on the concrete types, `parameters`, `setParameters(_:)`,
/// `storedCertificate()` and `deleteStoredCertificate()` must answer from the provider's
/// `RemoteProviderState`, never with an empty default that keeps no parameters and throws
/// `.unsupportedOperation`. The providers declare none of the four: `CertificateProvider`'s defaults
/// answer from `heldState`, which each conformance to `RemoteProvider` chose where it was declared.
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
