public import CertificateProviders

extension ProviderID {
    /// A Cloud Signature Consortium API v2 service (`csc`; remote signHash, CMS built locally),
    /// declared by this provider.
    public static let csc: ProviderID = "csc"
}
