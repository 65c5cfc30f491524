import CMS
internal import COpenSSL
import Foundation

/// Content digests with an extendable-output function, which OpenSSL 3.0's CMS code reads at the
/// function's default length: RFC 8419 pairs Ed448 with id-shake256 at 512 bits (RFC 8702 gives
/// SHAKE128 256 bits). The digest BIO the content was streamed through is finished at that length
/// here and compared with the messageDigest attribute.
package enum XOFContentDigest {
    /// Whether the signer's messageDigest attribute is the content's digest; nil when its digest
    /// algorithm is not SHAKE128 or SHAKE256 (OpenSSL's `CMS_SignerInfo_verify_content` decides).
    ///
    /// - Parameters:
    ///   - signerInfo: the `CMS_SignerInfo`.
    ///   - chain: the BIO chain from `CMS_dataInit`, read to its end.
    package static func matches(_ signerInfo: OpaquePointer, chain: OpaquePointer) -> Bool? {
        var digestAlgor: UnsafeMutablePointer<X509_ALGOR>?
        CMS_SignerInfo_get0_algs(signerInfo, nil, nil, &digestAlgor, nil)
        let nid = SignedDataVerifier.algorithmNID(digestAlgor)
        let length: Int
        switch nid {
        case NID_shake256: length = 64
        case NID_shake128: length = 32
        default: return nil
        }
        guard
            let raw = CMS_signed_get0_data_by_OBJ(
                signerInfo,
                OBJ_nid2obj(NID_pkcs9_messageDigest),
                -3,
                V_ASN1_OCTET_STRING
            )
        else { return false }
        let attribute = raw.assumingMemoryBound(to: ASN1_STRING.self)
        let expected = Array(UnsafeBufferPointer(start: attribute.pointee.data, count: Int(attribute.pointee.length)))
        guard let computed = digest(of: chain, nid: nid, length: length) else { return false }
        return computed == expected
    }

    /// Finishes a copy of the chain's digest BIO for `nid` at `length` bytes.
    private static func digest(of chain: OpaquePointer, nid: Int32, length: Int) -> [UInt8]? {
        var link: OpaquePointer? = chain
        while let bio = BIO_find_type(link, BIO_TYPE_MD) {
            var context: OpaquePointer?
            _ = withUnsafeMutablePointer(to: &context) { BIO_ctrl(bio, BIO_C_GET_MD_CTX, 0, $0) }
            if let context, EVP_MD_get_type(EVP_MD_CTX_get0_md(context)) == nid {
                guard let copy = EVP_MD_CTX_new() else { return nil }
                defer { EVP_MD_CTX_free(copy) }
                var output = [UInt8](repeating: 0, count: length)
                guard EVP_MD_CTX_copy_ex(copy, context) == 1, EVP_DigestFinalXOF(copy, &output, length) == 1 else {
                    ERR_clear_error()
                    return nil
                }
                return output
            }
            link = BIO_next(bio)
        }
        return nil
    }
}
