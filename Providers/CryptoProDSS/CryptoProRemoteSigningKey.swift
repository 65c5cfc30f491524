public import CertificateProviders

/// The key of a CryptoPro DSS certificate: it stays on the server, and the server signs documents
/// (or their digests, `Hash: True`) into finished CAdES/CMS containers, never a bare signature value
/// over caller-chosen bytes. A raw signature cannot be taken out of such a container either,
/// because it covers the server's own signed attributes.
///
/// The public half (algorithm, size, SubjectPublicKeyInfo) comes from the certificate, so the key
/// can be matched and shown; both signing calls throw `.unsupportedOperation` saying to use
/// `DocumentSigning.signDocument(_:)` (``CryptoProDSSProvider``) or ``CryptoProDSSClient/sign(document:certificateID:pin:parameters:)``.
public struct CryptoProRemoteSigningKey: SigningKey {
    /// The DSS certificate id the key belongs to.
    public let certificateID: Int
    /// The certificate's key algorithm.
    public let publicKeyAlgorithm: PublicKeyAlgorithm
    /// The certificate's key size in bits.
    public let keySize: Int
    /// The certificate's SubjectPublicKeyInfo (DER).
    public let publicKeyDERRepresentation: [UInt8]

    /// Describes the key of `certificate` (DSS id `certificateID`).
    public init(certificate: Certificate, certificateID: Int) {
        self.certificateID = certificateID
        publicKeyAlgorithm = certificate.publicKeyAlgorithm
        keySize = certificate.publicKeySize
        publicKeyDERRepresentation = certificate.publicKeyDERRepresentation
    }

    /// Always throws `.unsupportedOperation`: see the type's documentation.
    public func signature(for data: [UInt8], digestAlgorithm: DigestAlgorithm, scheme: SignatureScheme) async throws -> [UInt8] {
        throw unsupported
    }

    /// Always throws `.unsupportedOperation`: see the type's documentation.
    public func signature(forDigest digest: [UInt8], digestAlgorithm: DigestAlgorithm, scheme: SignatureScheme) async throws -> [UInt8] {
        throw unsupported
    }

    private var unsupported: CertificateProviderError {
        .unsupportedOperation("the key of CryptoPro DSS certificate \(certificateID) stays on the server, which returns finished CAdES/CMS signatures, not raw signature values; sign through DocumentSigning.signDocument(_:) (CryptoProDSSProvider) instead")
    }
}
