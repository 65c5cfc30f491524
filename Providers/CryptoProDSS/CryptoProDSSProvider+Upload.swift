import CertificateProviders
import Foundation

/// How a document goes up to the server (`uploadMode`, `maxUploadBytes`): whole, or as its digest.
extension CryptoProDSSProvider {
    /// The document's size, when the document itself is at hand (bytes, or the file beside a digest).
    /// - Throws: `.fileSystem` when the file's size cannot be read.
    static func documentSize(_ request: DocumentSigningRequest) throws -> Int64? {
        switch request.payload {
        case .content(let bytes): return Int64(bytes.count)
        case .digest:
            return try request.contentFile.map { url in
                let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
                guard let size = (attributes?[.size] as? NSNumber)?.int64Value else {
                    throw CertificateProviderError(.fileSystem, "CryptoPro DSS: cannot read the size of \(url.path)")
                }
                return size
            }
        }
    }

    /// Whether the document goes up whole (else its digest does).
    /// - Throws: `.invalidParameter` when `content` is asked for and cannot be sent.
    static func sendsContent(mode: UploadMode, size: Int64?, limit: Int) throws -> Bool {
        switch mode {
        case .content:
            guard let size else {
                throw CertificateProviderError.invalidParameter(
                    "CryptoPro DSS: uploadMode 'content' needs the document, but only its digest was given"
                )
            }
            guard size <= Int64(limit) else {
                throw CertificateProviderError.invalidParameter(
                    "CryptoPro DSS: the document is \(size) bytes, more than maxUploadBytes (\(limit)); raise "
                        + "maxUploadBytes or use uploadMode 'hash' or 'auto'"
                )
            }
            return true
        case .hash: return false
        case .auto: return size.map { $0 <= Int64(limit) } ?? false
        }
    }

    /// The document itself, when the server is to choose the digest (it must be the one that fits
    /// the certificate's key).
    /// - Throws: `.unsupportedAlgorithm` for another digest; `.fileSystem` when the file cannot be read.
    static func content(of request: DocumentSigningRequest, certificate: Certificate) throws -> [UInt8] {
        let keyAlgorithm = certificate.publicKeyAlgorithm
        let fitting = try DigestAlgorithm.preferred(for: keyAlgorithm)
        guard request.digestAlgorithm == fitting else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "CryptoPro DSS: the server chooses the digest of a document (\(fitting.displayName) for this "
                    + "\(keyAlgorithm.family) certificate), not \(request.digestAlgorithm.displayName); use "
                    + "uploadMode 'hash' to choose it"
            )
        }
        switch request.payload {
        case .content(let bytes): return bytes
        case .digest:
            // Sent whole only with a known size, so the file is there; it is at most maxUploadBytes.
            guard let url = request.contentFile, let data = FileManager.default.contents(atPath: url.path) else {
                throw CertificateProviderError(
                    .fileSystem,
                    "CryptoPro DSS: cannot read the document \(request.contentFile?.path ?? "-")"
                )
            }
            return Array(data)
        }
    }

    /// The document's digest in the algorithm the certificate's key needs (`Hash: True`).
    /// - Throws: `.invalidParameter` for an attached signature or a digest of the wrong length;
    ///   `.unsupportedAlgorithm` for a digest the key cannot use.
    static func digest(of request: DocumentSigningRequest, certificate: Certificate) throws -> [UInt8] {
        guard request.isDetached else {
            throw CertificateProviderError.invalidParameter(
                "CryptoPro DSS: a signature of a digest is always detached"
            )
        }
        switch request.payload {
        case .content(let bytes):
            return try CryptoProDSSProvider.hashModeDigest(for: certificate, requested: request.digestAlgorithm)
                .hash(bytes)
        case .digest(let digest, let given):
            let algorithm = try CryptoProDSSProvider.hashModeDigest(for: certificate, requested: given)
            guard algorithm == given else {
                throw CertificateProviderError(
                    .unsupportedAlgorithm,
                    "CryptoPro DSS: the certificate's \(certificate.publicKeyAlgorithm) key needs a \(algorithm) "
                        + "digest, not \(given)"
                )
            }
            guard digest.count == given.outputByteCount else {
                throw CertificateProviderError.invalidParameter(
                    "CryptoPro DSS: a \(given) digest is \(given.outputByteCount) bytes, not \(digest.count)"
                )
            }
            return digest
        }
    }

    /// The digest a hash-mode upload uses for a certificate's key, by the core's one rule
    /// (`DigestAlgorithm.preferred(for:)`): the Streebog digest of its size for a GOST key; for RSA
    /// and EC keys the one asked for (SHA-256 by default), but never Streebog.
    static func hashModeDigest(
        for certificate: Certificate,
        requested: DigestAlgorithm
    ) throws -> DigestAlgorithm {
        let keyAlgorithm = certificate.publicKeyAlgorithm
        let fitting = try DigestAlgorithm.preferred(for: keyAlgorithm)
        return keyAlgorithm.isGOST || requested.isGOST ? fitting : requested
    }

    /// The `uploadMode` of validated parameters (the schema allows only the three modes).
    static func uploadMode(_ parameters: ProviderParameters) -> UploadMode {
        (try? parameters.string(ParameterKey.uploadMode)).flatMap(UploadMode.init(rawValue:)) ?? .auto
    }
}
