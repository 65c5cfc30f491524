public import CertificateProviders

extension ProviderID {
    /// The Foresight Mobile Platform's DSS API (`fmp-dss`), declared by this provider.
    public static let fmpDSS: ProviderID = "fmp-dss"
}
