import CertificateProviders
import Foundation

/// The one way this package makes CMS SignedData: every public entry of ``CMSSigner``, the
/// coordinator's strategies, batch keys and PAdES come here.
///
/// A local (OpenSSL) key signs synchronously through the signer's cached prepared SignedData
/// (``SignedDataTemplateCache``, the internal fast path) or, for keys the template does not take,
/// with `CMS_SignerInfo_sign`. Any other key (remote, HSM), and every key for PAdES, receives the
/// DER of the signed attributes through `SigningKey`; ``SignedDataBuilder`` prepares the
/// SignerInfo and puts the returned signature in.
package enum SignedDataSigner {
    /// What to sign, and how.
    package struct Request: Sendable {
        /// The content's digest, made with ``digestAlgorithm``.
        package var digest: [UInt8]
        /// The content to embed, or nil for a detached signature.
        package var attachedContent: [UInt8]?
        /// `.cadesBES` or `.cms`.
        package var format: SignatureFormat
        /// The algorithm ``digest`` was made with, and the signature's digest.
        package var digestAlgorithm: DigestAlgorithm
        /// The signing-time attribute (seconds precision); nil for PAdES baseline (ETSI EN 319
        /// 142-1), whose PDF `/M` holds the claimed time. Without it every key, local ones
        /// included, signs through `SigningKey`: OpenSSL's `CMS_SignerInfo_sign` would add a
        /// signingTime of its own.
        package var signingTime: Date?

        /// A request for a signature of `digest` (detached when `attachedContent` is nil).
        package init(
            digest: [UInt8],
            attachedContent: [UInt8]? = nil,
            format: SignatureFormat,
            digestAlgorithm: DigestAlgorithm,
            signingTime: Date?
        ) {
            self.digest = digest
            self.attachedContent = attachedContent
            self.format = format
            self.digestAlgorithm = digestAlgorithm
            self.signingTime = signingTime
        }

        /// A detached signature of `digest` with a signing-time attribute.
        package static func detached(
            digest: [UInt8],
            format: SignatureFormat,
            digestAlgorithm: DigestAlgorithm,
            signingTime: Date
        ) -> Request {
            Request(digest: digest, format: format, digestAlgorithm: digestAlgorithm, signingTime: signingTime)
        }

        /// A detached PAdES CAdES signature of a PDF's ByteRange digest: ESS signing-certificate-v2,
        /// contentType and messageDigest, and no signingTime attribute.
        package static func pades(digest: [UInt8], digestAlgorithm: DigestAlgorithm) -> Request {
            Request(digest: digest, format: .cadesBES, digestAlgorithm: digestAlgorithm, signingTime: nil)
        }
    }

    /// Signs `request` as `identity`; returns the DER ContentInfo.
    /// - Throws: `.keyCertificateMismatch` when the key is not the certificate's;
    ///   `.invalidParameter` when the digest length does not fit the algorithm;
    ///   `.unsupportedAlgorithm` for a format or digest OpenSSL cannot make with the key;
    ///   whatever the key throws.
    package static func sign(_ request: Request, identity: SigningIdentity) async throws -> [UInt8] {
        if let signingTime = request.signingTime, let local = localKey(of: identity) {
            return try signLocallyWithTemplate(request, signingTime: signingTime, identity: identity, key: local)
        }
        try checkKey(identity)
        let scheme = identity.key.defaultScheme
        switch try prepare(request, identity: identity, scheme: scheme) {
        case .finished(let der):
            return der
        case .pending(let pending):
            let signature = try await identity.key.signature(
                for: pending.signedAttributes,
                digestAlgorithm: request.digestAlgorithm,
                scheme: scheme
            )
            return try SignedDataBuilder.finish(pending, signature: signature)
        }
    }

    /// Prepares the SignedData of `request` for an external signature with `scheme`.
    private static func prepare(
        _ request: Request,
        identity: SigningIdentity,
        scheme: SignatureScheme
    ) throws -> SignedDataBuilder.Prepared {
        try SignedDataBuilder.prepare(
            digest: request.digest,
            attachedContent: request.attachedContent,
            certificate: identity.certificate,
            chain: identity.chain,
            localKey: nil,
            format: request.format,
            digestAlgorithm: request.digestAlgorithm,
            signingTime: request.signingTime,
            scheme: scheme
        )
    }

    /// Makes many signatures with a key that signs digests in batches (``BatchSigningKey``): every
    /// container's signed attributes are prepared first, the key is asked for all their signatures
    /// in one call (chunks of at most its `maximumBatchSize`), then each container is finished. A
    /// signature that does not verify with the certificate fails the whole call, so no container
    /// holds one.
    /// - Parameters:
    ///   - requests: one per document (the same format, digest and signing time for all).
    ///   - identity: the signer.
    ///   - key: the identity's key as a batch key.
    /// - Returns: one DER ContentInfo per request, in order.
    /// - Throws: `.keyCertificateMismatch`; `.cryptoFailure` when the key returns another number of
    ///   signatures or one that does not verify; whatever the key throws.
    package static func signBatch(
        _ requests: [Request],
        identity: SigningIdentity,
        key: any BatchSigningKey
    ) async throws -> [[UInt8]] {
        try checkKey(identity)
        guard let digestAlgorithm = requests.first?.digestAlgorithm else { return [] }
        let scheme = key.defaultScheme
        var pendings: [(index: Int, pending: SignedDataBuilder.Pending)] = []
        var finished: [Int: [UInt8]] = [:]
        for (index, request) in requests.enumerated() {
            switch try prepare(request, identity: identity, scheme: scheme) {
            case .finished(let der): finished[index] = der
            case .pending(let pending): pendings.append((index, pending))
            }
        }
        let chunkSize = max(1, key.maximumBatchSize)
        for start in stride(from: 0, to: pendings.count, by: chunkSize) {
            let chunk = pendings[start..<min(start + chunkSize, pendings.count)]
            let messages = chunk.map(\.pending.signedAttributes)
            let made = try await key.signatures(forMessages: messages, digestAlgorithm: digestAlgorithm, scheme: scheme)
            guard made.count == messages.count else {
                throw CertificateProviderError(
                    .cryptoFailure,
                    "the signing key returned \(made.count) signatures for \(messages.count) digests"
                )
            }
            for (item, signature) in zip(chunk, made) {
                finished[item.index] = try SignedDataBuilder.finish(item.pending, signature: signature)
            }
        }
        return try requests.indices.map { index in
            guard let der = finished[index] else {
                throw CertificateProviderError(.cryptoFailure, "signature \(index + 1) of the batch was not made")
            }
            return der
        }
    }

    /// The OpenSSL key of a local identity, or nil for keys OpenSSL does not hold.
    package static func localKey(of identity: SigningIdentity) -> LocalSigningKey? { identity.key as? LocalSigningKey }

    /// Signs with a local key without suspending, through the signer's cached prepared SignedData
    /// (``SignedDataTemplateCache``) when the key signs that way (RSA PKCS#1 v1.5, ECDSA): per
    /// document only the digest and signing time are replaced, then OpenSSL encodes and the key
    /// signs. Other keys (RSA-PSS by default, GOST, Ed25519) take ``signLocally(_:signingTime:identity:key:signingCertificateAttribute:)``.
    package static func signLocallyWithTemplate(
        _ request: Request,
        signingTime: Date,
        identity: SigningIdentity,
        key: LocalSigningKey
    ) throws -> [UInt8] {
        guard SignedDataTemplate.supports(key), request.format == .cms || request.format == .cadesBES else {
            return try signLocally(request, signingTime: signingTime, identity: identity, key: key)
        }
        do {
            return try SignedDataTemplateCache.shared.sign(
                request,
                signingTime: signingTime,
                identity: identity,
                key: key
            )
        } catch let error as CertificateProviderError
            where error.code != .keyCertificateMismatch && error.code != .invalidParameter
        {
            // A key or digest OpenSSL will not prepare a template for still signs the one-off way
            // (which throws its own error when it cannot either).
            return try signLocally(request, signingTime: signingTime, identity: identity, key: key)
        }
    }

    /// Signs with a local key without suspending, with `CMS_SignerInfo_sign`.
    package static func signLocally(
        _ request: Request,
        signingTime: Date,
        identity: SigningIdentity,
        key: LocalSigningKey,
        signingCertificateAttribute: [UInt8]? = nil
    ) throws -> [UInt8] {
        try checkKey(identity)
        let prepared = try SignedDataBuilder.prepare(
            digest: request.digest,
            attachedContent: request.attachedContent,
            certificate: identity.certificate,
            chain: identity.chain,
            localKey: key.handle,
            format: request.format,
            digestAlgorithm: request.digestAlgorithm,
            signingTime: signingTime,
            signingCertificateAttribute: signingCertificateAttribute
        )
        guard case .finished(let der) = prepared else {
            throw CertificateProviderError(.cryptoFailure, "OpenSSL did not finish a signature with a local key")
        }
        return der
    }

    /// - Throws: `.keyCertificateMismatch` when the identity's key is not its certificate's.
    private static func checkKey(_ identity: SigningIdentity) throws {
        guard identity.key.matches(identity.certificate) else {
            throw CertificateProviderError(
                .keyCertificateMismatch,
                "the signing key does not belong to the certificate '\(identity.certificate.subject)'"
            )
        }
    }
}
