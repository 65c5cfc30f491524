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
/// Not thread-safe: one template per worker (the OpenSSL structure is mutated per signature).
final class SignedDataTemplate {
    private let pending: SignedDataBuilder.Pending
    private let key: LocalSigningKey
    private let scheme: SignatureScheme
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
        self.key = key
        self.scheme = key.defaultScheme
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
        if !detached { try SignedDataBuilder.embed(attachedContent ?? [], in: pending.cms) }
        let attributes = try SignedDataBuilder.signedAttributesDER(signerInfo)
        let signature = try key.signSynchronously(
            digest: algorithm.hash(attributes),
            digestAlgorithm: algorithm,
            scheme: scheme
        )
        guard let slot = CMS_SignerInfo_get0_signature(signerInfo),
            ASN1_STRING_set(slot, signature, Int32(signature.count)) == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not store the signature in the CMS structure")
        }
        return try pending.cms.derBytes()
    }
}
