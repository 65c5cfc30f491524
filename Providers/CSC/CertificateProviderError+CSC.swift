public import CertificateProviders

extension CertificateProviderError.Code {
    /// A remote signing authorization (a CSC signature activation data, SAD) expired or was used up
    /// before the signature was made: sign again, which authorizes again (with a fresh OTP when the
    /// credential asks for one).
    public static let authorizationExpired = Self("authorizationExpired")
    /// The signing service returned a signature value that does not verify with the credential's
    /// certificate (a wrong key, a wrong hash, a damaged value). Nothing was written: report it to the
    /// service's operator; retrying will not help.
    public static let invalidServerSignature = Self("invalidServerSignature")
}
