package import OpenSSLWrappers

/// The certificate, chain and private key a ``CurlTransport`` presents when a server asks for a TLS
/// client certificate. Made from a `SigningIdentity` whose key this process holds with
/// `RemoteProviderSupport`'s `TLSClientIdentity(_:)`; the HTTP client itself knows no identity types.
public struct TLSClientIdentity: Sendable {
    /// The client certificate.
    package let certificate: X509Handle
    /// The certificates sent after it (issuer first).
    package let chain: [X509Handle]
    /// Its private key.
    package let key: EVPKeyHandle
    /// The certificate's subject (RFC 2253), for error messages.
    public let subject: String

    /// Creates an identity from OpenSSL objects the caller keeps valid for as long as the value lives.
    package init(certificate: X509Handle, chain: [X509Handle], key: EVPKeyHandle, subject: String) {
        self.certificate = certificate
        self.chain = chain
        self.key = key
        self.subject = subject
    }
}
