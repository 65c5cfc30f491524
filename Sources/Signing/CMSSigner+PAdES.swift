import CertificateProviders
import Foundation

extension CMSSigner {
    /// Makes a detached CAdES signature for PAdES baseline (ETSI EN 319 142-1): ESS
    /// signing-certificate-v2, contentType and messageDigest, and **no** signingTime attribute (the
    /// PDF's `/M` holds the claimed time).
    ///
    /// Every key, local ones included, signs the DER of the signed attributes through `SigningKey`:
    /// OpenSSL's `CMS_SignerInfo_sign` would add a signingTime of its own.
    ///
    /// - Parameters:
    ///   - digest: the digest of the PDF's ByteRange, made with `digestAlgorithm`.
    ///   - identity: the signer.
    ///   - digestAlgorithm: SHA-256 (default), SHA-384 or SHA-512.
    /// - Returns: the DER ContentInfo.
    package static func signPAdES(
        digest: [UInt8],
        identity: SigningIdentity,
        digestAlgorithm: DigestAlgorithm
    ) async throws -> [UInt8] {
        guard identity.key.matches(identity.certificate) else {
            throw CertificateProviderError(
                .keyCertificateMismatch,
                "the signing key does not belong to the certificate '\(identity.certificate.subject)'"
            )
        }
        let scheme = identity.key.defaultScheme
        let prepared = try SignedDataBuilder.prepare(
            digest: digest,
            attachedContent: nil,
            certificate: identity.certificate,
            chain: identity.chain,
            localKey: nil,
            format: .cadesBES,
            digestAlgorithm: digestAlgorithm,
            signingTime: nil,
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
}
