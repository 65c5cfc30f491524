public import CertificateProviders

extension ProviderID {
    /// Keys on smart cards, USB tokens and HSMs through a PKCS#11 module (`pkcs11`), declared by this
    /// provider.
    public static let pkcs11: ProviderID = "pkcs11"
}
