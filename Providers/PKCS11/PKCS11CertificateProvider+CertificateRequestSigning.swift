public import CertificateProviders

/// A token's key signs a certificate request for a new certificate of the same key.
extension PKCS11CertificateProvider: CertificateRequestSigning {
    /// The key ``initialize(options:)`` finds on the token (the `uri`, with the PIN).
    /// - Throws: as ``initialize(options:)``.
    public func certificateRequestKey(options: ProviderParameters) async throws -> any SigningKey {
        try await initialize(options: options).key
    }
}
