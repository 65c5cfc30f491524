public import CertificateProviders

/// `certsign csr --provider aws-kms`: the KMS key signs a request before any certificate exists for it.
extension AWSKMSProvider: CertificateRequestSigning {
    /// The KMS key alone (``signingKey(options:)``): `GetPublicKey`'s public key, and `Sign` with
    /// the request's bytes as `RAW` (they fit in 4096 bytes).
    /// - Throws: as ``signingKey(options:)``.
    public func certificateRequestKey(options: ProviderParameters) async throws -> any SigningKey {
        try await signingKey(options: options)
    }
}
