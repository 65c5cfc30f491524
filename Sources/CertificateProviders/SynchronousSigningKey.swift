/// A key that signs digests without suspending (a local OpenSSL key, a PKCS#11 token): its
/// asynchronous ``SigningKey/signature(forDigest:digestAlgorithm:scheme:)`` is the synchronous call,
/// and callers on threads that are not Swift concurrency's (the emulator's) call that directly.
package protocol SynchronousSigningKey: SigningKey {
    /// Signs `digest`, whose length already fits `digestAlgorithm`, without suspending.
    /// - Throws: `.unsupportedAlgorithm` for a scheme or digest that does not fit the key; the key's
    ///   own errors.
    func signChecked(_ digest: [UInt8], _ digestAlgorithm: DigestAlgorithm, _ scheme: SignatureScheme) throws -> [UInt8]
}

extension SynchronousSigningKey {
    /// Signs a precomputed digest without suspending.
    /// - Throws: `.invalidParameter` for a digest of the wrong length; as `signChecked`.
    package func signSynchronously(
        digest: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) throws -> [UInt8] {
        try digestAlgorithm.checkLength(of: digest)
        return try signChecked(digest, digestAlgorithm, scheme)
    }

    /// Signs a precomputed digest (the synchronous call: the key does not suspend).
    /// - Throws: `.invalidParameter` for a digest of the wrong length; `.unsupportedAlgorithm` for a
    ///   scheme or digest that does not fit the key; the key's own errors.
    public func signature(
        forDigest digest: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) async throws -> [UInt8] {
        try signSynchronously(digest: digest, digestAlgorithm: digestAlgorithm, scheme: scheme)
    }
}
