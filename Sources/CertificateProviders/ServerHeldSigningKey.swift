/// The key of a certificate whose private half stays on a server that never hands out raw
/// signature values (FMP DSS signs platform resources; CryptoPro DSS returns finished CAdES/CMS).
///
/// The public half (algorithm, size, SubjectPublicKeyInfo) comes from the certificate, so the key can
/// be matched and shown; both signing calls throw `.unsupportedOperation` with the provider's
/// explanation of how to sign instead. Providers whose server builds whole signatures conform to
/// `DocumentSigning`, which the signing coordinator uses in place of this key.
public struct ServerHeldSigningKey: SigningKey {
    /// The server's ID of the certificate the key belongs to.
    public let certificateID: String
    /// The certificate's key algorithm.
    public let publicKeyAlgorithm: PublicKeyAlgorithm
    /// The certificate's key size in bits.
    public let keySize: Int
    /// The certificate's SubjectPublicKeyInfo (DER).
    public let publicKeyDERRepresentation: [UInt8]
    /// Why the key cannot sign bytes here, and what to use instead (the error's reason).
    public let explanation: String

    /// Describes the server-held key of `certificate`.
    /// - Parameters:
    ///   - certificate: the certificate the server returned.
    ///   - certificateID: the server's ID for it.
    ///   - explanation: the reason given when someone asks this key to sign.
    public init(certificate: Certificate, certificateID: String, explanation: String) {
        self.certificateID = certificateID
        self.explanation = explanation
        publicKeyAlgorithm = certificate.publicKeyAlgorithm
        keySize = certificate.publicKeySize
        publicKeyDERRepresentation = certificate.publicKeyDERRepresentation
    }

    /// Always throws `.unsupportedOperation` with ``explanation``.
    public func signature(
        forDigest digest: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [UInt8] {
        throw CertificateProviderError.unsupportedOperation(explanation)
    }
}
