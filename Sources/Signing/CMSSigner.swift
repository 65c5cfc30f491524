public import CertificateProviders
public import Foundation

/// Reports progress of long work: bytes done so far and the total.
public typealias SigningProgress = @Sendable (_ done: Int64, _ total: Int64) -> Void

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
    public static let defaultChunkSize = 1 << 20

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
        let digestAlgorithm = try resolve(digestAlgorithm, for: identity)
        return try await sign(
            digest: digestAlgorithm.hash(content),
            attachedContent: detached ? nil : content,
            identity: identity,
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
            digest: digest,
            attachedContent: nil,
            identity: identity,
            format: format,
            digestAlgorithm: digestAlgorithm,
            signingTime: signingTime
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
        if detached {
            let digest = try await FileDigest.compute(
                url: url,
                algorithm: digestAlgorithm,
                chunkSize: chunkSize,
                progress: progress
            )
            return try await sign(
                digest: digest.digest,
                attachedContent: nil,
                identity: identity,
                format: format,
                digestAlgorithm: digestAlgorithm,
                signingTime: signingTime
            )
        }
        let content = try await FileDigest.read(
            url: url,
            limit: attachedFileSizeLimit,
            chunkSize: chunkSize,
            progress: progress
        )
        return try await sign(
            digest: digestAlgorithm.hash(content),
            attachedContent: content,
            identity: identity,
            format: format,
            digestAlgorithm: digestAlgorithm,
            signingTime: signingTime
        )
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
        let digestAlgorithm = try resolve(digestAlgorithm, for: identity)
        return try signSynchronously(
            digest: digestAlgorithm.hash(content),
            attachedContent: detached ? nil : content,
            identity: identity,
            format: format,
            digestAlgorithm: digestAlgorithm,
            signingTime: signingTime
        )
    }

    /// Makes a detached signature from a precomputed digest with a local key, without suspending.
    /// - Throws: `.unsupportedOperation` when the identity's key is not a `LocalSigningKey`;
    ///   `.invalidParameter` when the digest length does not fit the algorithm.
    package static func signSynchronously(
        digest: [UInt8],
        identity: SigningIdentity,
        format: SignatureFormat = .cadesBES,
        digestAlgorithm: DigestAlgorithm = .sha256,
        signingTime: Date = Date()
    ) throws -> [UInt8] {
        try signSynchronously(
            digest: digest,
            attachedContent: nil,
            identity: identity,
            format: format,
            digestAlgorithm: digestAlgorithm,
            signingTime: signingTime
        )
    }

    private static func signSynchronously(
        digest: [UInt8],
        attachedContent: [UInt8]?,
        identity: SigningIdentity,
        format: SignatureFormat,
        digestAlgorithm: DigestAlgorithm,
        signingTime: Date
    ) throws -> [UInt8] {
        guard let local = localKey(of: identity) else {
            throw CertificateProviderError.unsupportedOperation(
                "synchronous signing needs a local key; '\(identity.certificate.subject)' has a "
                    + "\(type(of: identity.key))"
            )
        }
        _ = try resolve(digestAlgorithm, for: identity)
        return try signLocallyWithTemplate(
            digest: digest,
            attachedContent: attachedContent,
            identity: identity,
            key: local,
            format: format,
            digestAlgorithm: digestAlgorithm,
            signingTime: signingTime
        )
    }

    static func sign(
        digest: [UInt8],
        attachedContent: [UInt8]?,
        identity: SigningIdentity,
        format: SignatureFormat,
        digestAlgorithm: DigestAlgorithm,
        signingTime: Date
    ) async throws -> [UInt8] {
        _ = try resolve(digestAlgorithm, for: identity)
        if let local = localKey(of: identity) {
            return try signLocallyWithTemplate(
                digest: digest,
                attachedContent: attachedContent,
                identity: identity,
                key: local,
                format: format,
                digestAlgorithm: digestAlgorithm,
                signingTime: signingTime
            )
        }
        try checkKey(identity)
        let scheme = identity.key.defaultScheme
        let prepared = try SignedDataBuilder.prepare(
            digest: digest,
            attachedContent: attachedContent,
            certificate: identity.certificate,
            chain: identity.chain,
            localKey: nil,
            format: format,
            digestAlgorithm: digestAlgorithm,
            signingTime: signingTime,
            scheme: scheme
        )
        switch prepared {
        case .finished(let der):
            return der
        case .pending(let pending):
            let signature = try await identity.key.signature(
                for: pending.signedAttributes,
                digestAlgorithm: digestAlgorithm,
                scheme: scheme
            )
            return try SignedDataBuilder.finish(pending, signature: signature)
        }
    }

    /// The caller's digest, or the one that fits the signer's key; checked to be computable here.
    ///
    /// RSA and EC keys sign with any SHA-2 digest the caller asks for. GOST R 34.10-2012 keys sign
    /// only with the GOST R 34.11-2012 digest of their size (as RFC 9215 and every GOST verifier
    /// require), and Streebog goes only with GOST keys.
    /// - Throws: `.unsupportedAlgorithm` for a digest that does not fit the key, or Streebog without
    ///   the gost engine ("GOST needs libengine-gost-openssl").
    static func resolve(_ digestAlgorithm: DigestAlgorithm?, for identity: SigningIdentity) throws -> DigestAlgorithm {
        let keyAlgorithm = identity.certificate.publicKeyAlgorithm
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

    /// Makes many signatures with a key that signs digests in batches (``BatchSigningKey``): every
    /// container's signed attributes are prepared first, the key is asked for all their signatures
    /// in one call (chunks of at most its `maximumBatchSize`), then each container is finished. A
    /// signature that does not verify with the certificate fails the whole call, so no container
    /// holds one.
    /// - Parameters:
    ///   - items: each document's digest and, for attached signatures, its content.
    ///   - identity: the signer.
    ///   - key: the identity's key as a batch key.
    ///   - format: `.cadesBES` or `.cms`.
    ///   - digestAlgorithm: the algorithm the digests were made with.
    ///   - signingTime: the signing-time attribute of every signature.
    /// - Returns: one DER ContentInfo per item, in order.
    /// - Throws: `.keyCertificateMismatch`; `.cryptoFailure` when the key returns another number of
    ///   signatures or one that does not verify; whatever the key throws.
    static func signBatch(
        _ items: [(digest: [UInt8], attachedContent: [UInt8]?)],
        identity: SigningIdentity,
        key: any BatchSigningKey,
        format: SignatureFormat,
        digestAlgorithm: DigestAlgorithm,
        signingTime: Date
    ) async throws -> [[UInt8]] {
        try checkKey(identity)
        let scheme = key.defaultScheme
        var pendings: [SignedDataBuilder.Pending] = []
        var finished: [Int: [UInt8]] = [:]
        var pendingIndexes: [Int] = []
        for (index, item) in items.enumerated() {
            let prepared = try SignedDataBuilder.prepare(
                digest: item.digest,
                attachedContent: item.attachedContent,
                certificate: identity.certificate,
                chain: identity.chain,
                localKey: nil,
                format: format,
                digestAlgorithm: digestAlgorithm,
                signingTime: signingTime,
                scheme: scheme
            )
            switch prepared {
            case .finished(let der): finished[index] = der
            case .pending(let pending):
                pendings.append(pending)
                pendingIndexes.append(index)
            }
        }
        let chunkSize = max(1, key.maximumBatchSize)
        var signatures: [[UInt8]] = []
        signatures.reserveCapacity(pendings.count)
        for start in stride(from: 0, to: pendings.count, by: chunkSize) {
            let chunk = pendings[start..<min(start + chunkSize, pendings.count)]
            let digests = chunk.map { digestAlgorithm.hash($0.signedAttributes) }
            let made = try await key.signatures(forDigests: digests, digestAlgorithm: digestAlgorithm, scheme: scheme)
            guard made.count == digests.count else {
                throw CertificateProviderError(
                    .cryptoFailure,
                    "the signing key returned \(made.count) signatures for \(digests.count) digests"
                )
            }
            signatures += made
        }
        for (position, pending) in pendings.enumerated() {
            finished[pendingIndexes[position]] = try SignedDataBuilder.finish(pending, signature: signatures[position])
        }
        return try items.indices.map { index in
            guard let der = finished[index] else {
                throw CertificateProviderError(.cryptoFailure, "signature \(index + 1) of the batch was not made")
            }
            return der
        }
    }

    /// The OpenSSL key of a local identity, or nil for keys OpenSSL does not hold.
    static func localKey(of identity: SigningIdentity) -> LocalSigningKey? { identity.key as? LocalSigningKey }

    /// Signs with a local key without suspending, through the signer's cached prepared SignedData
    /// (``SignedDataTemplateCache``) when the key signs that way (RSA PKCS#1 v1.5, ECDSA): per
    /// document only the digest and signing time are replaced, then OpenSSL encodes and the key
    /// signs. Other keys (RSA-PSS by default, GOST, Ed25519) take ``signLocally(digest:attachedContent:identity:key:format:digestAlgorithm:signingTime:signingCertificateAttribute:)``.
    static func signLocallyWithTemplate(
        digest: [UInt8],
        attachedContent: [UInt8]?,
        identity: SigningIdentity,
        key: LocalSigningKey,
        format: SignatureFormat,
        digestAlgorithm: DigestAlgorithm,
        signingTime: Date
    ) throws -> [UInt8] {
        func oneOff() throws -> [UInt8] {
            try signLocally(
                digest: digest,
                attachedContent: attachedContent,
                identity: identity,
                key: key,
                format: format,
                digestAlgorithm: digestAlgorithm,
                signingTime: signingTime
            )
        }
        guard SignedDataTemplate.supports(key), format == .cms || format == .cadesBES else { return try oneOff() }
        do {
            return try SignedDataTemplateCache.shared.sign(
                digest: digest,
                attachedContent: attachedContent,
                identity: identity,
                key: key,
                format: format,
                digestAlgorithm: digestAlgorithm,
                signingTime: signingTime
            )
        } catch let error as CertificateProviderError
            where error.code != .keyCertificateMismatch && error.code != .invalidParameter
        {
            // A key or digest OpenSSL will not prepare a template for still signs the one-off way
            // (which throws its own error when it cannot either).
            return try oneOff()
        }
    }

    /// Signs with a local key without suspending.
    static func signLocally(
        digest: [UInt8],
        attachedContent: [UInt8]?,
        identity: SigningIdentity,
        key: LocalSigningKey,
        format: SignatureFormat,
        digestAlgorithm: DigestAlgorithm,
        signingTime: Date,
        signingCertificateAttribute: [UInt8]? = nil
    ) throws -> [UInt8] {
        try checkKey(identity)
        let prepared = try SignedDataBuilder.prepare(
            digest: digest,
            attachedContent: attachedContent,
            certificate: identity.certificate,
            chain: identity.chain,
            localKey: key.handle,
            format: format,
            digestAlgorithm: digestAlgorithm,
            signingTime: signingTime,
            signingCertificateAttribute: signingCertificateAttribute
        )
        guard case .finished(let der) = prepared else {
            throw CertificateProviderError(.cryptoFailure, "OpenSSL did not finish a signature with a local key")
        }
        return der
    }

    private static func checkKey(_ identity: SigningIdentity) throws {
        guard identity.key.matches(identity.certificate) else {
            throw CertificateProviderError(
                .keyCertificateMismatch,
                "the signing key does not belong to the certificate '\(identity.certificate.subject)'"
            )
        }
    }
}
