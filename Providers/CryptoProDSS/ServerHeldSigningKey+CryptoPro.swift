public import CertificateProviders

extension ServerHeldSigningKey {
    /// The key of a CryptoPro DSS certificate: it stays on the server, and the server signs documents
    /// (or their digests, `Hash: True`) into finished CAdES/CMS containers, never a bare signature
    /// value over caller-chosen bytes. A raw signature cannot be taken out of such a container either,
    /// because it covers the server's own signed attributes. Sign through
    /// `DocumentSigning.signDocument(_:)` (``CryptoProDSSProvider``) or
    /// ``CryptoProDSSClient/sign(document:certificateID:pin:parameters:)``.
    public static func cryptoProDSS(certificate: Certificate, certificateID: Int) -> ServerHeldSigningKey {
        ServerHeldSigningKey(
            certificate: certificate,
            certificateID: String(certificateID),
            explanation:
                "the key of CryptoPro DSS certificate \(certificateID) stays on the server, which returns finished "
                + "CAdES/CMS signatures, not raw signature values; sign through DocumentSigning.signDocument(_:) "
                + "(CryptoProDSSProvider) instead"
        )
    }
}
