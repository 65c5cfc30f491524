public import CertificateProviders

extension CertificateProviderError.Code {
    /// A server that builds signatures (`DocumentSigning`) returned a valid signature that is not
    /// the one asked for: another signer than the selected certificate, another format, digest or
    /// detached-ness. Nothing was written or recorded; report it to the server's operator.
    public static let serverSignatureMismatch = Self(ValidationCodeName.serverSignatureMismatch)

    /// A long-term level (B-LT, B-LTA) cannot be reached: no usable revocation answer (OCSP, CRL)
    /// for a certificate of a path, or an issuer missing from the signature and the trust anchors.
    /// The reason names the certificate and what was tried; nothing was written.
    public static let revocationUnavailable = Self(ValidationCodeName.revocationUnavailable)

    /// A certificate of a path to embed is revoked: the signature cannot be made long-term.
    public static let certificateRevoked = Self(ValidationCodeName.certificateRevoked)
}

/// The names of the codes this module adds: each case's name is the code's raw value.
package enum ValidationCodeName: String {
    case serverSignatureMismatch, revocationUnavailable, certificateRevoked
}
