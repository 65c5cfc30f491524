internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders

/// Owns one OpenSSL `CMS_ContentInfo*` and frees it in `deinit` (STYLE.md habit 2).
///
/// Not `Sendable`: a handle is built, signed and encoded by one task at a time.
final class CMSContentInfoHandle {
    /// The owned structure; borrowed by callers for the duration of a call.
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`; it is freed with `CMS_ContentInfo_free`.
    init(takingOwnershipOf pointer: OpaquePointer) { self.pointer = pointer }

    deinit { CMS_ContentInfo_free(pointer) }

    /// The DER (or, for structures parsed from BER, the re-encoded) ContentInfo.
    func derBytes() throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_CMS_ContentInfo(pointer, &output)
        guard length > 0, let output else { throw OpenSSLErrorQueue.error(.cryptoFailure, "could not encode the CMS signature") }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// The first SignerInfo, or nil when the structure is not SignedData or has no signer.
    var firstSignerInfo: OpaquePointer? {
        guard let infos = CMS_get0_SignerInfos(pointer), COpenSSLShims_sk_CMS_SignerInfo_num(infos) > 0 else { return nil }
        return COpenSSLShims_sk_CMS_SignerInfo_value(infos, 0)
    }
}
