public import CertificateProviders
import SignatureJournal
public import Signing

extension SigningCoordinator {
    /// A coordinator for a test: each of `providers` registered under its own `providerID` (the
    /// coordinator uses that very instance, so the test can script it and look at its calls), and a
    /// journal in memory (``SignatureJournal/inMemory()``): nothing is written to disk unless a
    /// signing call names an output file.
    ///
    /// ```swift
    /// let signer = try TestPKI().issueLeaf(subject: "CN=Test Signer")
    /// let coordinator = try SigningCoordinator.makeForTesting(
    ///     providers: [InMemoryCertificateProvider(id: .pkcs12, identity: signer)]
    /// )
    /// ```
    /// - Throws: `.providerAlreadyRegistered` when two providers share an ID; the in-memory journal's
    ///   errors.
    public static func makeForTesting(providers: [any CertificateProvider]) throws -> SigningCoordinator {
        var registry = ProviderRegistry()
        for provider in providers {
            try registry.register(provider.providerID, description: "test double") { provider }
        }
        return SigningCoordinator(registry: registry, journal: try SignatureJournal.inMemory())
    }
}
