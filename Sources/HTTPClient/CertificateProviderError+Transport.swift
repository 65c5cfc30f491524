public import CertificateProviders

extension CertificateProviderError.Code {
    /// The server's TLS certificate does not chain to a trusted CA (or is expired, revoked, or
    /// self-signed): trust its CA with `trustedCAFile`, or check that the URL points at the right server.
    public static let untrustedServerCertificate = Self("untrustedServerCertificate")
    /// The server's TLS certificate is valid but names another host than the URL's: use the name the
    /// certificate was issued for.
    public static let serverHostnameMismatch = Self("serverHostnameMismatch")
    /// The server refused the TLS client certificate, or demanded one and none was configured: set
    /// `clientIdentity` to an identity the server's CA issued.
    public static let clientCertificateRejected = Self("clientCertificateRejected")
    /// Another TLS failure (protocol version, cipher, a client identity that cannot be used).
    public static let tls = Self("tls")
    /// The server's answer is larger than the transport accepts (`maximumResponseBodyBytes`).
    public static let responseTooLarge = Self("responseTooLarge")
}
