public import CertificateProviders

/// A PKCS#12 file's key signs a certificate request for a new certificate of the same key.
extension PKCS12CertificateProvider: CertificateRequestSigning {
    /// The key of the file given as `file` or `data` (opened in memory: nothing is stored), else of
    /// the identity stored under the parameters' `alias`.
    /// - Throws: as ``initialize(options:)`` and ``storedCertificate()``; `.notStored` when neither a
    ///   file nor a stored identity is there.
    public func certificateRequestKey(options: ProviderParameters) async throws -> any SigningKey {
        let options = try Self.schema.validate(options)
        let merged = parameters.merging(options)
        if merged[ParameterKey.file] != nil || merged[ParameterKey.data] != nil {
            var inMemory = options
            inMemory[ParameterKey.inMemory] = .boolean(true)
            return try await initialize(options: inMemory).key
        }
        guard let identity = try storedCertificate() else {
            throw CertificateProviderError(
                .notStored,
                "no identity to sign the request with: give the PKCS#12 file (parameter 'file') or the alias of a "
                    + "stored identity (parameter 'alias')"
            )
        }
        return identity.key
    }
}
