import CertificateIssuing
public import CertificateProviders
public import Foundation

/// The emulator's CA services: an RFC 3161 TSA, OCSP and a CRL (see `TSARouter`, `RevocationRouter`).
extension DSSEmulator {
    /// The TSA's certificate (critical extendedKeyUsage timeStamping), issued by
    /// ``timestampAuthorityCA``.
    public var timestampAuthorityCertificate: Certificate { pki.timestampIdentity.certificate }

    /// The CA that issued the TSA certificate and signs OCSP responses and the CRL: the seed's CA
    /// when the seed carries its key (the standard seed does).
    public var timestampAuthorityCA: Certificate { pki.authority.certificate }

    /// The TSA URL while running (`<base>/tsa`), else nil.
    public var timestampURL: URL? { baseURL?.appendingPathComponent("tsa") }

    /// The OCSP responder URL while running (`<base>/ocsp`), else nil.
    public var ocspURL: URL? { baseURL?.appendingPathComponent("ocsp") }

    /// The CRL URL while running (`<base>/crl`), else nil.
    public var crlURL: URL? { baseURL?.appendingPathComponent("crl") }

    /// Revokes a certificate of the emulator's CA from `date` on (default now): OCSP then answers
    /// `revoked` with that time and the CRL lists it. Revoking twice keeps the first date.
    public func revoke(_ certificate: Certificate, at date: Date = Date()) {
        pki.revoke(serialNumber: certificate.serialNumber, at: date)
    }
}
