public import CertificateProviders
import Testing

/// A real key that is not a `LocalSigningKey`: it forwards to one, as a remote or HSM key forwards to
/// its server, so that code under test must take its "external signature" path.
public struct ForwardingSigningKey: SigningKey {
    /// The local key every signature is made with.
    public let inner: LocalSigningKey
    /// The inner key's algorithm.
    public var publicKeyAlgorithm: PublicKeyAlgorithm { inner.publicKeyAlgorithm }
    /// The inner key's size in bits.
    public var keySize: Int { inner.keySize }
    /// The inner key's SubjectPublicKeyInfo.
    public var publicKeyDERRepresentation: [UInt8] { inner.publicKeyDERRepresentation }

    /// Wraps `inner`.
    public init(inner: LocalSigningKey) { self.inner = inner }

    /// Signs with the inner key.
    public func signature(
        forDigest digest: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [UInt8] {
        try await inner.signature(forDigest: digest, digestAlgorithm: digestAlgorithm, scheme: scheme)
    }
}

/// `identity` with its (local) key wrapped in a ``ForwardingSigningKey``, so that it is not a
/// `LocalSigningKey`; same certificate and chain.
public func withExternalKey(_ identity: SigningIdentity) throws -> SigningIdentity {
    let local = try #require(identity.key as? LocalSigningKey)
    return SigningIdentity(
        certificate: identity.certificate,
        chain: identity.chain,
        key: ForwardingSigningKey(inner: local)
    )
}
