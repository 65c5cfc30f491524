internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
internal import OpenSSLWrappers

/// Owns one OpenSSL `CMS_ContentInfo*` and frees it in `deinit`.
///
/// Not `Sendable`: a handle is built, signed and encoded by one task at a time.
package final class CMSContentInfoHandle {
    /// The owned structure; borrowed by callers for the duration of a call.
    package let pointer: OpaquePointer

    /// Takes ownership of `pointer`; it is freed with `CMS_ContentInfo_free`.
    package init(takingOwnershipOf pointer: OpaquePointer) { self.pointer = pointer }

    deinit { CMS_ContentInfo_free(pointer) }

    /// The DER (or, for structures parsed from BER, the re-encoded) ContentInfo.
    package func derBytes() throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_CMS_ContentInfo(pointer, &output)
        guard length > 0, let output else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not encode the CMS signature")
        }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// The first SignerInfo, or nil when the structure is not SignedData or has no signer.
    package var firstSignerInfo: OpaquePointer? {
        guard let infos = CMS_get0_SignerInfos(pointer), COpenSSLShims_sk_CMS_SignerInfo_num(infos) > 0 else {
            return nil
        }
        return COpenSSLShims_sk_CMS_SignerInfo_value(infos, 0)
    }
}

extension CMSContentInfoHandle {
    /// The DER inside a PEM `CMS` or `PKCS7` block, or nil when `bytes` hold no such block.
    /// - Throws: when OpenSSL cannot read the bytes at all.
    package static func derFromPEM(_ bytes: [UInt8]) throws -> [UInt8]? {
        try CertificateProviderError.convertingOpenSSLErrors { try derFromPEM(bio: bytes) }
    }

    private static func derFromPEM(bio bytes: [UInt8]) throws -> [UInt8]? {
        try MemoryBIO.withReadBIO(bytes) { bio in
            var name: UnsafeMutablePointer<CChar>?
            var header: UnsafeMutablePointer<CChar>?
            var data: UnsafeMutablePointer<UInt8>?
            var length = 0
            guard PEM_read_bio(bio, &name, &header, &data, &length) == 1 else { return nil }
            defer {
                COpenSSLShims_OPENSSL_free(name)
                COpenSSLShims_OPENSSL_free(header)
                COpenSSLShims_OPENSSL_free(data)
            }
            guard let name, ["CMS", "PKCS7"].contains(String(cString: name)), let data else { return nil }
            return Array(UnsafeBufferPointer(start: data, count: length))
        }
    }
}
