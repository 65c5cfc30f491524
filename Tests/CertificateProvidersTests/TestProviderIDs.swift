import CertificateProviders
import TestSupport

/// The ID these tests register their doubles under (the core declares no provider IDs).
extension ProviderID {
    /// The PKCS#12 provider's name, for in-memory local identities.
    static let pkcs12: ProviderID = "pkcs12"
}
