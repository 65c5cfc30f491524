import CertificateProviders
import TestSupport

/// The IDs these tests register their doubles under: the core declares no provider IDs and this target
/// links no provider, so the doubles take the names the real providers use (journal rows and server
/// locations read as they would in an app).
extension ProviderID {
    /// The PKCS#12 provider's name, for in-memory local identities.
    static let pkcs12: ProviderID = "pkcs12"
    /// The FMP DSS provider's name, for a double that keeps a server signature history.
    static let fmpDSS: ProviderID = "fmp-dss"
}
