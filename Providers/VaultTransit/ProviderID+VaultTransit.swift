public import CertificateProviders

extension ProviderID {
    /// A HashiCorp Vault or OpenBao transit secrets engine key (`vault-transit`; the server signs
    /// digests, the CMS is built locally), declared by this provider.
    public static let vaultTransit: ProviderID = "vault-transit"
}
