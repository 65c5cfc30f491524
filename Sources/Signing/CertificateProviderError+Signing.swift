public import CertificateProviders

extension CertificateProviderError.Code {
    /// A server that builds signatures (`DocumentSigning`) returned a valid signature that is not
    /// the one asked for: another signer than the selected certificate, another format, digest or
    /// detached-ness. Nothing was written or recorded; report it to the server's operator.
    public static let serverSignatureMismatch = Self("serverSignatureMismatch")
}
