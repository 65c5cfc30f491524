public import CertificateProviders

extension ProviderID {
    /// The CryptoPro DSS SignServer REST API (`cryptopro-dss`), declared by this provider.
    public static let cryptoProDSS: ProviderID = "cryptopro-dss"
}
