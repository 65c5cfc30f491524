public import CertificateProviders

/// How the provider declares itself: its ID, its parameters (``PKCS12CertificateProvider/schema``), its summary and how
/// the registry makes it.
extension PKCS12CertificateProvider: BuiltInProvider {
    /// Always ``ProviderID/pkcs12``.
    public static var id: ProviderID { .pkcs12 }

    /// Makes a provider with `parameters` (validated) and the context's `environment` (where `env:NAME`
    /// password sources are read).
    /// - Throws: `.invalidParameter` naming a rejected key.
    public static func make(
        parameters: ProviderParameters,
        context: ProviderContext
    ) throws -> PKCS12CertificateProvider {
        try PKCS12CertificateProvider(parameters: parameters, environment: context.environment)
    }
}
