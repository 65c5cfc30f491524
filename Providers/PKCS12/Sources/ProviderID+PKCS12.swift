public import CertificateProviders

extension ProviderID {
    /// Local PKCS#12 files and the encrypted identity store (`pkcs12`), declared by this provider.
    public static let pkcs12: ProviderID = "pkcs12"
}
