internal import COpenSSL
import CertificateProviders
import Foundation

/// A CMS SignedData prepared once per identity (and per batch worker) and reused for every
/// signature of a batch: OpenSSL builds the structure once (certificates, digest and signature
/// algorithm identifiers, issuer and serial, contentType and, for CAdES-BES, the ESS
/// signing-certificate-v2 attribute); per document only the messageDigest and signingTime
/// attributes (and embedded content) are replaced, OpenSSL encodes the signed attributes, the key
/// signs them and OpenSSL encodes the whole ContentInfo.
///
/// It is the external-key path of ``SignedDataBuilder`` (the signature over the DER signed
/// attributes put into the SignerInfo) with an OpenSSL key, so every result has the shape that
/// `openssl cms -verify` and the interop tests already accept. Only RSA PKCS#1 v1.5 and ECDSA keys
/// use it; other keys sign through ``SignedDataBuilder/prepare(digest:attachedContent:certificate:chain:localKey:format:digestAlgorithm:signingTime:signingCertificateAttribute:scheme:)``.
///
/// The key signs through one OpenSSL signing context made once per template (`EVP_PKEY_sign_init`
/// and the digest and padding settings are not repeated per signature, as `openssl speed` does).
/// The template does not keep the `LocalSigningKey` object alive, only OpenSSL's reference to the
/// key inside that context (see ``SignedDataTemplateCache``).
///
/// Not thread-safe: one template per worker (the OpenSSL structure is mutated per signature).
final class SignedDataTemplate {
    private let pending: SignedDataBuilder.Pending
    private let context: SigningContext
    private let detached: Bool

    /// Whether a key can sign through a template (RSA with PKCS#1 v1.5, or EC).
    static func supports(_ key: LocalSigningKey) -> Bool {
        (key.publicKeyAlgorithm.isRSA && key.defaultScheme == .rsaPKCS1v15) || key.publicKeyAlgorithm.isEC
    }

    /// Builds the template.
    /// - Throws: `.keyCertificateMismatch` when the key is not the certificate's;
    ///   `.unsupportedAlgorithm` for a key ``supports(_:)`` refuses; OpenSSL failures as `.cryptoFailure`.
    init(
        identity: SigningIdentity,
        key: LocalSigningKey,
        format: SignatureFormat,
        detached: Bool,
        digestAlgorithm: DigestAlgorithm,
        signingCertificateAttribute: [UInt8]?
    ) throws {
        guard Self.supports(key) else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "a \(key.publicKeyAlgorithm) key does not sign through a prepared SignedData"
            )
        }
        guard key.matches(identity.certificate) else {
            throw CertificateProviderError(
                .keyCertificateMismatch,
                "the signing key does not belong to the certificate '\(identity.certificate.subject)'"
            )
        }
        let prepared = try SignedDataBuilder.prepare(
            digest: [UInt8](repeating: 0, count: digestAlgorithm.outputByteCount),
            attachedContent: detached ? nil : [],
            certificate: identity.certificate,
            chain: identity.chain,
            localKey: nil,
            format: format,
            digestAlgorithm: digestAlgorithm,
            signingTime: Date(timeIntervalSince1970: 0),
            signingCertificateAttribute: signingCertificateAttribute,
            scheme: key.defaultScheme
        )
        guard case .pending(let pending) = prepared else {
            throw CertificateProviderError(.cryptoFailure, "OpenSSL finished a SignedData that should wait for its key")
        }
        self.pending = pending
        self.context = try SigningContext(key: key, digestAlgorithm: digestAlgorithm)
        self.detached = detached
    }

    /// Makes one signature: the template with this document's digest, signing time and (attached)
    /// content; the key signs the signed attributes OpenSSL encodes.
    /// - Returns: the DER ContentInfo.
    /// - Throws: `.invalidParameter` for a digest of the wrong length; `.cryptoFailure`.
    func sign(digest: [UInt8], signingTime: Date, attachedContent: [UInt8]?) throws -> [UInt8] {
        let algorithm = pending.digestAlgorithm
        guard digest.count == algorithm.outputByteCount else {
            throw CertificateProviderError.invalidParameter(
                "a \(algorithm) digest has \(algorithm.outputByteCount) bytes, not \(digest.count)"
            )
        }
        OpenSSLErrorQueue.clear()
        let signerInfo = pending.signerInfo
        for nid in [NID_pkcs9_signingTime, NID_pkcs9_messageDigest, NID_pkcs9_contentType] {
            let index = CMS_signed_get_attr_by_NID(signerInfo, nid, -1)
            if index >= 0, let removed = CMS_signed_delete_attr(signerInfo, index) { X509_ATTRIBUTE_free(removed) }
        }
        try SignedDataBuilder.addAttributes(signerInfo, digest: digest, signingTime: signingTime)
        if !detached {
            try SignedDataBuilder.embed(attachedContent ?? [], in: pending.cms)
        }
        // An idle template does not hold the last document's content.
        defer { if !detached { try? SignedDataBuilder.embed([], in: pending.cms) } }
        let attributes = try SignedDataBuilder.signedAttributesDER(signerInfo)
        let signature = try context.sign(digest: algorithm.hash(attributes))
        guard let slot = CMS_SignerInfo_get0_signature(signerInfo),
            ASN1_STRING_set(slot, signature, Int32(signature.count)) == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not store the signature in the CMS structure")
        }
        return try pending.cms.derBytes()
    }
}

/// An `EVP_PKEY_CTX` initialised once for signing digests with a key's default scheme (RSA PKCS#1
/// v1.5 or ECDSA) and one digest algorithm, then used for every signature; freed in `deinit`.
///
/// Not thread-safe: owned by one ``SignedDataTemplate``.
final class SigningContext {
    private let pointer: OpaquePointer
    private let digestLength: Int

    /// Makes and initialises the context; it holds its own reference to the key's `EVP_PKEY`.
    /// - Throws: `.unsupportedAlgorithm` when OpenSSL refuses the digest or padding for the key.
    init(key: LocalSigningKey, digestAlgorithm: DigestAlgorithm) throws {
        let md = try digestAlgorithm.evpMD()
        OpenSSLErrorQueue.clear()
        guard let context = EVP_PKEY_CTX_new(key.handle.pointer, nil) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not create a signing context")
        }
        guard EVP_PKEY_sign_init(context) == 1, EVP_PKEY_CTX_set_signature_md(context, md) == 1,
            !key.publicKeyAlgorithm.isRSA || EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
        else {
            EVP_PKEY_CTX_free(context)
            throw OpenSSLErrorQueue.error(
                .unsupportedAlgorithm,
                "the \(key.publicKeyAlgorithm) key cannot sign \(digestAlgorithm) digests"
            )
        }
        pointer = context
        digestLength = digestAlgorithm.outputByteCount
    }

    deinit { EVP_PKEY_CTX_free(pointer) }

    /// Signs a digest of the context's algorithm.
    /// - Throws: `.cryptoFailure` when OpenSSL fails.
    func sign(digest: [UInt8]) throws -> [UInt8] {
        precondition(digest.count == digestLength, "a digest of the template's algorithm")
        var length = 0
        guard EVP_PKEY_sign(pointer, nil, &length, digest, digest.count) == 1 else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not size the signature")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_sign(pointer, &signature, &length, digest, digest.count) == 1 else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "signing failed")
        }
        if length < signature.count { signature.removeLast(signature.count - length) }
        return signature
    }
}
