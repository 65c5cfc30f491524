public import CertificateProviders

extension CertificateProviderError.Code {
    /// A server that builds signatures (`DocumentSigning`) returned a valid signature that is not
    /// the one asked for: another signer than the selected certificate, another format, digest or
    /// detached-ness. Nothing was written or recorded; report it to the server's operator.
    public static let serverSignatureMismatch = Self(SigningCodeName.serverSignatureMismatch)
}

/// The names of the codes this module adds: each case's name is the code's raw value.
enum SigningCodeName: String {
    case serverSignatureMismatch, timestampInvalid
}
