import CMS
public import CertificateProviders

/// The revocation status of one certificate of a signer's path (or of its time-stamping
/// authority's path), as ``CMSVerifier`` found it when revocation was asked for.
public struct CertificateRevocationStatus: Sendable, Hashable, CustomStringConvertible {
    /// Where the certificate sits: an open set.
    public struct Role: Hashable, Sendable, CustomStringConvertible {
        /// The stable name (`signer`, `signerCA`, `timestampAuthority`, `timestampAuthorityCA`).
        public let rawValue: String
        /// Creates a role.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// A one-line summary for logs and command-line output.
        public var description: String { rawValue }

        /// The signer's own certificate.
        public static let signer = Role("signer")
        /// A CA certificate between the signer and its trust anchor.
        public static let signerCA = Role("signerCA")
        /// The certificate of the time-stamping authority of the signer's signature timestamp.
        public static let timestampAuthority = Role("timestampAuthority")
        /// A CA certificate between the time-stamping authority and its trust anchor.
        public static let timestampAuthorityCA = Role("timestampAuthorityCA")
    }

    /// The certificate.
    public let certificate: Certificate
    /// Where it sits in the paths checked.
    public let role: Role
    /// Its status and where the answer came from.
    public let status: RevocationStatus

    /// The issuer's certificate (the next one of the path), used to ask OCSP.
    package let issuer: Certificate?

    /// Creates a per-certificate status.
    public init(certificate: Certificate, role: Role, status: RevocationStatus) {
        self.init(certificate: certificate, role: role, status: status, issuer: nil)
    }

    package init(certificate: Certificate, role: Role, status: RevocationStatus, issuer: Certificate?) {
        self.certificate = certificate
        self.role = role
        self.status = status
        self.issuer = issuer
    }

    /// A one-line summary for logs and command-line output.
    public var description: String { "\(certificate.subject) (\(role)): \(status)" }
}
