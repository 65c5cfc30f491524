import CertificateProviders

/// How ``SigningCoordinator`` makes the signatures of one identity, picked once when the identity
/// is resolved.
enum SigningStrategy {
    /// OpenSSL holds the key: signed synchronously through the identity's prepared SignedData, and
    /// batches go through ``BatchSigningPipeline`` on every core.
    case localKey(LocalSigningKey)
    /// A key that signs one digest per call (remote, PKCS#11): ``CMSSigner`` builds the SignedData
    /// around the signature it returns.
    case externalKey
    /// A key that signs many digests with one operation (one authorization for N signatures).
    case batchKey(any BatchSigningKey)
    /// The provider's server builds the whole signature from the document or its digest.
    case serverDocument(any DocumentSigning)

    /// The strategy for `identity` of `provider`: a server that builds documents first, then a
    /// local key, a batch key, else an external key.
    init(provider: any CertificateProvider, identity: SigningIdentity) {
        if let server = provider as? any DocumentSigning {
            self = .serverDocument(server)
        } else if let local = SignedDataSigner.localKey(of: identity) {
            self = .localKey(local)
        } else if let batch = identity.key as? any BatchSigningKey {
            self = .batchKey(batch)
        } else {
            self = .externalKey
        }
    }
}
