public import CertificateProviders

/// How the provider declares itself: its ID, its parameters (``PKCS11CertificateProvider/schema``), its summary and how
/// the registry makes it.
extension PKCS11CertificateProvider: BuiltInProvider {
    /// Always ``ProviderID/pkcs11``.
    public static var id: ProviderID { .pkcs11 }

    /// Makes a provider with `parameters` (validated) and nothing of the context.
    /// - Throws: `.invalidParameter` naming a rejected key.
    public static func make(
        parameters: ProviderParameters,
        context: ProviderContext
    ) throws -> PKCS11CertificateProvider {
        try PKCS11CertificateProvider(parameters: parameters)
    }
}
