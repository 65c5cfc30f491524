public import CertificateProviders

extension CertificateProviderError.Code {
    /// A remote signing authorization (a CSC signature activation data, SAD) expired or was used up
    /// before the signature was made: sign again, which authorizes again (with a fresh OTP when the
    /// credential asks for one).
    public static let authorizationExpired = Self("authorizationExpired")
}
