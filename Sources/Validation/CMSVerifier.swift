import CMS
public import CertificateProviders
public import Foundation

/// Checks CMS SignedData / CAdES signatures with OpenSSL, every signer of them, under a
/// ``ValidationPolicy`` (ETSI EN 319 102-1 basic validation as EU DSS and pyHanko apply it).
///
/// For each SignerInfo: the signer's certificate is in the signature; the signature value verifies;
/// the content digest matches (for an attached signature, the embedded content; a document given
/// beside it must be byte-identical); the ESS signing-certificate(-v2) names the signer; no
/// algorithm or key size the policy refuses is used; the certificate is meant for signing; it and
/// (when trust anchors are given) its chain are valid at the validation time (now by default) or at
/// the time a valid trusted signature timestamp proves. The `signingTime` attribute is reported as
/// the signer's claim, never trusted. Nothing is fetched from the network unless the policy asks.
///
/// What other signers write is read: DER or BER (indefinite-length) CMS, followed by zero padding
/// (as in a PDF's `/Contents`; any other trailing byte is `.malformed`); RSA, RSASSA-PSS, ECDSA,
/// Ed25519 and Ed448 (RFC 8419, SHAKE256 digests included). A signature algorithm whose hash is not
/// the `digestAlgorithm`, or that does not fit the key, is `.algorithmMismatch`; one OpenSSL cannot
/// check is `.unsupportedAlgorithm`, never `.signatureInvalid`.
///
/// Rejections are results, not errors: ``VerificationResult/failure`` (and each signer's
/// ``SignerVerification/failure``) says why in words a user understands. Errors are thrown only
/// when the content file cannot be read.
public enum CMSVerifier {
    /// Verifies a signature over bytes.
    ///
    /// - Parameters:
    ///   - signature: DER, BER or PEM (`-----BEGIN CMS-----`) CMS ContentInfo; zero bytes may follow it.
    ///   - content: the signed document; required for a detached signature, optional for an
    ///     attached one (when given, it must equal the embedded content, else `.contentChanged`).
    ///   - trustAnchors: the certificates to trust (roots, or intermediates as partial-chain
    ///     anchors). Empty: the chain is not checked and the result says so.
    ///   - policy: validation time, algorithms, key usage, revocation; default strict and offline.
    /// - Returns: the result with every signer, and the first signer's details at the top level.
    public static func verify(
        signature: [UInt8],
        content: [UInt8]?,
        trustAnchors: [Certificate],
        policy: ValidationPolicy = ValidationPolicy()
    ) -> VerificationResult {
        SignedDataVerifier.verify(
            signature: signature,
            content: content.map { .bytes($0) } ?? .none,
            trustAnchors: trustAnchors,
            policy: policy
        )
    }

    /// Verifies a signature over a file, streaming the file through the digests.
    ///
    /// - Parameters:
    ///   - signature: DER, BER or PEM CMS ContentInfo.
    ///   - url: the signed file (for an attached signature it must equal the embedded content).
    ///   - trustAnchors: as in ``verify(signature:content:trustAnchors:policy:)``.
    ///   - policy: as in ``verify(signature:content:trustAnchors:policy:)``.
    /// - Throws: `.fileSystem` when the file cannot be opened.
    public static func verify(
        signature: [UInt8],
        contentFileAt url: URL,
        trustAnchors: [Certificate],
        policy: ValidationPolicy = ValidationPolicy()
    ) throws -> VerificationResult {
        _ = try FileDigest.fileSize(url)
        return SignedDataVerifier.verify(
            signature: signature,
            content: .file(url),
            trustAnchors: trustAnchors,
            policy: policy
        )
    }
}
