public import CertificateProviders

/// The key of an FMP DSS certificate: it stays on the DSS server, and the platform offers no call
/// that signs an arbitrary digest, only ``FMPClient/sign(resource:table:params:column:hhiveID:dssPassword:certificateID:certificatePIN:)``
/// of a platform resource cell (the server builds the whole CAdES).
///
/// The public half (algorithm, size, SubjectPublicKeyInfo) comes from the certificate, so the key
/// can be matched and shown; both signing calls throw `.unsupportedOperation` with that reason.
public struct FMPRemoteSigningKey: SigningKey {
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
        .unsupportedOperation("the key of DSS certificate \(certificateID) stays on the server and the Foresight Mobile Platform signs platform resources only, not arbitrary data or digests; use FMPClient.sign(resource:table:params:column:hhiveID:dssPassword:certificateID:certificatePIN:)")
    }
}
