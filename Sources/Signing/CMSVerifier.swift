public import CertificateProviders
public import Foundation

/// Checks CMS SignedData / CAdES-BES signatures with OpenSSL: structure, content digest, signature
/// value, ESS signing-certificate binding, the signer's validity at signing time and, when trust
/// anchors are given, the chain to one of them (validated at the signing time, any purpose).
///
/// Rejections are results, not errors: ``VerificationResult/failure`` says why in words a user
/// understands. Errors are thrown only when the content file cannot be read.
public enum CMSVerifier {
    /// Verifies a signature over bytes.
    ///
    /// - Parameters:
    ///   - signature: DER, BER or PEM (`-----BEGIN CMS-----`) CMS ContentInfo.
    ///   - content: the signed document; required for a detached signature, optional for an
    ///     attached one (when given, it is the content checked).
    ///   - trustAnchors: the certificates to trust (roots, or intermediates as partial-chain
    ///     anchors). Empty: the chain is not checked and the result says so.
    /// - Returns: the result with signer, signing time, digest, chain and any failure reason.
    public static func verify(signature: [UInt8], content: [UInt8]?, trustAnchors: [Certificate]) -> VerificationResult {
        SignedDataVerifier.verify(signature: signature, content: content.map { .bytes($0) } ?? .none, trustAnchors: trustAnchors)
    }

    /// Verifies a detached signature over a file, streaming the file through the digest.
    ///
    /// - Parameters:
    ///   - signature: DER, BER or PEM CMS ContentInfo.
    ///   - url: the signed file.
    ///   - trustAnchors: as in ``verify(signature:content:trustAnchors:)``.
    /// - Throws: `.fileSystem` when the file cannot be opened.
    public static func verify(signature: [UInt8], contentFileAt url: URL, trustAnchors: [Certificate]) throws -> VerificationResult {
        _ = try FileDigest.fileSize(url)
        return SignedDataVerifier.verify(signature: signature, content: .file(url), trustAnchors: trustAnchors)
    }
}
