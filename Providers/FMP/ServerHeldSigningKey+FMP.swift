public import CertificateProviders

extension ServerHeldSigningKey {
    /// The key of an FMP DSS certificate: it stays on the DSS server, and the platform offers no call
    /// that signs an arbitrary digest, only ``FMPClient/sign(resource:table:params:column:hhiveID:dssPassword:certificateID:certificatePIN:)``
    /// of a platform resource cell (the server builds the whole CAdES).
    public static func fmpDSS(certificate: Certificate, certificateID: Int) -> ServerHeldSigningKey {
        ServerHeldSigningKey(
            certificate: certificate,
            certificateID: String(certificateID),
            explanation:
                "the key of DSS certificate \(certificateID) stays on the server and the Foresight Mobile Platform signs platform resources only, not arbitrary data or digests; use FMPClient.sign(resource:table:params:column:hhiveID:dssPassword:certificateID:certificatePIN:)"
        )
    }
}
