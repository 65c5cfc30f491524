public import CertificateProviders
public import Foundation

/// Makes CMS SignedData (RFC 5652) and CAdES-BES (ETSI EN 319 122-1) signatures with OpenSSL, for
/// any `SigningIdentity`: local OpenSSL keys sign inside OpenSSL, other keys (remote, HSM) are
/// asked to sign the DER of the signed attributes through `SigningKey`.
///
/// Every signature carries the signer certificate and its chain, the signing time, the content
/// type and message digest; CAdES-BES adds ESS signing-certificate-v2 (the certificate's hash with
/// the same digest). The output is a DER `ContentInfo` that `openssl cms -verify -binary` accepts
/// (`-cades` for CAdES-BES).
public enum CMSSigner {
    /// The largest file ``sign(fileAt:identity:format:detached:digestAlgorithm:signingTime:chunkSize:progress:)``
    /// embeds in an attached signature: attached signatures hold the content in memory while the
    /// structure is encoded (about twice its size). Detached signatures stream any size.
    public static let attachedFileSizeLimit: Int64 = 64 << 20

    /// The default read size for streamed files (1 MiB).
    public static let defaultChunkSize = FileDigest.defaultChunkSize

    /// Signs bytes as CMS SignedData / CAdES-BES; returns DER ContentInfo.
    ///
    /// - Parameters:
    ///   - content: the document.
    ///   - identity: the signer: certificate, chain and key.
    ///   - format: `.cadesBES` (default) or `.cms`.
    ///   - detached: whether the content is left out of the signature (default true).
    ///   - digestAlgorithm: SHA-256, SHA-384, SHA-512, Streebog-256 or -512; nil (default) takes the
    ///     digest that fits the key (`DigestAlgorithm.preferred(for:)`: Streebog for GOST keys,
    ///     SHA-256 otherwise).
    ///   - signingTime: the signing-time attribute (seconds precision).
    /// - Returns: the DER-encoded CMS ContentInfo.
    /// - Throws: `.keyCertificateMismatch` when the key is not the certificate's;
    ///   `.unsupportedAlgorithm` for a format or digest OpenSSL cannot make with the key;
    ///   whatever the key throws (a remote key: `.network`, `.authenticationFailed`, …).
    public static func sign(
        content: [UInt8],
        identity: SigningIdentity,
        format: SignatureFormat = .cadesBES,
        detached: Bool = true,
        digestAlgorithm: DigestAlgorithm? = nil,
        signingTime: Date = Date()
    ) async throws -> [UInt8] {
        try await sign(
            contentRequest(content, identity, format, detached, digestAlgorithm, signingTime),
            identity: identity
        )
    }

    /// The request of the content variants: the content's digest with the algorithm that fits the
    /// identity (`digestAlgorithm` or the key's default), the content attached unless `detached`.
    /// - Throws: `.unsupportedAlgorithm` for a digest the key cannot sign with.
    private static func contentRequest(
        _ content: [UInt8],
        _ identity: SigningIdentity,
        _ format: SignatureFormat,
        _ detached: Bool,
        _ digestAlgorithm: DigestAlgorithm?,
        _ signingTime: Date
    ) throws -> SignedDataSigner.Request {
        let digestAlgorithm = try resolve(digestAlgorithm, for: identity)
        return SignedDataSigner.Request(
            digest: digestAlgorithm.hash(content),
            attachedContent: detached ? nil : content,
            format: format,
            digestAlgorithm: digestAlgorithm,
            signingTime: signingTime
        )
    }

    /// Makes a detached signature from the content's precomputed digest.
    ///
    /// - Parameters:
    ///   - digest: the content's digest, computed with `digestAlgorithm`.
    ///   - identity: the signer.
    ///   - format: `.cadesBES` (default) or `.cms`.
    ///   - digestAlgorithm: the algorithm `digest` was made with.
    ///   - signingTime: the signing-time attribute.
    /// - Returns: the DER-encoded detached CMS ContentInfo.
    /// - Throws: `.invalidParameter` when the digest length does not fit the algorithm; as
    ///   ``sign(content:identity:format:detached:digestAlgorithm:signingTime:)``.
    public static func sign(
        digest: [UInt8],
        identity: SigningIdentity,
        format: SignatureFormat = .cadesBES,
        digestAlgorithm: DigestAlgorithm = .sha256,
        signingTime: Date = Date()
    ) async throws -> [UInt8] {
        try await sign(
            .detached(digest: digest, format: format, digestAlgorithm: digestAlgorithm, signingTime: signingTime),
            identity: identity
        )
    }

    /// Signs a file, reading it in chunks: a detached signature never holds the file in memory.
    ///
    /// Cancellation is checked between chunks; a cancelled call throws `.cancelled`.
    ///
    /// - Parameters:
    ///   - url: the file.
    ///   - identity: the signer.
    ///   - format: `.cadesBES` (default) or `.cms`.
    ///   - detached: whether the content is left out (default true). Attached signatures are limited
    ///     to ``attachedFileSizeLimit``.
    ///   - digestAlgorithm: as in ``sign(content:identity:format:detached:digestAlgorithm:signingTime:)``
    ///     (nil: the digest that fits the key).
    ///   - signingTime: the signing-time attribute.
    ///   - chunkSize: bytes per read (default 1 MiB).
    ///   - progress: called after each chunk with bytes hashed and the file size.
    /// - Returns: the DER-encoded CMS ContentInfo.
    /// - Throws: `.fileSystem` when the file cannot be read; `.invalidParameter` for an attached
    ///   signature of a file over the limit; `.cancelled`; as
    ///   ``sign(content:identity:format:detached:digestAlgorithm:signingTime:)``.
    public static func sign(
        fileAt url: URL,
        identity: SigningIdentity,
        format: SignatureFormat = .cadesBES,
        detached: Bool = true,
        digestAlgorithm: DigestAlgorithm? = nil,
        signingTime: Date = Date(),
        chunkSize: Int = CMSSigner.defaultChunkSize,
        progress: SigningProgress? = nil
    ) async throws -> [UInt8] {
        let digestAlgorithm = try resolve(digestAlgorithm, for: identity)
        var request = SignedDataSigner.Request(
            digest: [],
            format: format,
            digestAlgorithm: digestAlgorithm,
            signingTime: signingTime
        )
        if detached {
            request.digest = try await FileDigest.compute(
                url: url,
                algorithm: digestAlgorithm,
                chunkSize: chunkSize,
                progress: progress
            ).digest
        } else {
            let content = try await FileDigest.read(
                url: url,
                limit: attachedFileSizeLimit,
                chunkSize: chunkSize,
                progress: progress
            )
            request.digest = digestAlgorithm.hash(content)
            request.attachedContent = content
        }
        return try await sign(request, identity: identity)
    }

    /// Signs bytes with a local (OpenSSL) key without suspending: for callers on threads that are
    /// not Swift concurrency's (a server's connection threads), which must not block waiting for the
    /// cooperative pool.
    ///
    /// - Parameters: as ``sign(content:identity:format:detached:digestAlgorithm:signingTime:)``.
    /// - Returns: the DER-encoded CMS ContentInfo.
    /// - Throws: `.unsupportedOperation` when the identity's key is not a `LocalSigningKey`; otherwise
    ///   as the asynchronous variant.
    package static func signSynchronously(
        content: [UInt8],
        identity: SigningIdentity,
        format: SignatureFormat = .cadesBES,
        detached: Bool = true,
        digestAlgorithm: DigestAlgorithm? = nil,
        signingTime: Date = Date()
    ) throws -> [UInt8] {
        try signSynchronously(
            contentRequest(content, identity, format, detached, digestAlgorithm, signingTime),
            signingTime: signingTime,
            identity: identity
        )
    }

    /// Signs `request` with a local (OpenSSL) key without suspending, `signingTime` in its
    /// signing-time attribute (the digest form of the synchronous variant).
    /// - Throws: `.unsupportedOperation` when the identity's key is not a `LocalSigningKey`;
    ///   `.invalidParameter` when the digest length does not fit the algorithm.
    package static func signSynchronously(
        _ request: SignedDataSigner.Request,
        signingTime: Date,
        identity: SigningIdentity
    ) throws -> [UInt8] {
        guard let local = SignedDataSigner.localKey(of: identity) else {
            throw CertificateProviderError.unsupportedOperation(
                "synchronous signing needs a local key; '\(identity.certificate.subject)' has a "
                    + "\(type(of: identity.key))"
            )
        }
        _ = try resolve(request.digestAlgorithm, for: identity)
        return try SignedDataSigner.signLocallyWithTemplate(
            request,
            signingTime: signingTime,
            identity: identity,
            key: local
        )
    }

    /// Checks the digest against the key, then signs through ``SignedDataSigner``.
    package static func sign(_ request: SignedDataSigner.Request, identity: SigningIdentity) async throws -> [UInt8] {
        _ = try resolve(request.digestAlgorithm, for: identity)
        return try await SignedDataSigner.sign(request, identity: identity)
    }

    /// The caller's digest, or the one that fits the signer's key; checked to be computable here.
    ///
    /// RSA and EC keys sign with any SHA-2 digest the caller asks for. GOST R 34.10-2012 keys sign
    /// only with the GOST R 34.11-2012 digest of their size (as RFC 9215 and every GOST verifier
    /// require), and Streebog goes only with GOST keys.
    /// - Throws: `.unsupportedAlgorithm` for a digest that does not fit the key, or Streebog without
    ///   the gost engine ("GOST needs libengine-gost-openssl").
    package static func resolve(
        _ digestAlgorithm: DigestAlgorithm?,
        for identity: SigningIdentity
    ) throws -> DigestAlgorithm {
        try resolve(digestAlgorithm, forKey: identity.certificate.publicKeyAlgorithm)
    }

    /// ``resolve(_:for:)`` for a key of `keyAlgorithm` (a certificate's, when there is no key here).
    package static func resolve(
        _ digestAlgorithm: DigestAlgorithm?,
        forKey keyAlgorithm: PublicKeyAlgorithm
    ) throws -> DigestAlgorithm {
        let fitting = try DigestAlgorithm.preferred(for: keyAlgorithm)
        let resolved = digestAlgorithm ?? fitting
        if (keyAlgorithm.isGOST || resolved.isGOST) && resolved != fitting {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "a \(keyAlgorithm.family) key signs with \(fitting.displayName), not \(resolved.displayName); leave "
                    + "the digest out to use the key's"
            )
        }
        try resolved.checkAvailable()
        return resolved
    }
}
