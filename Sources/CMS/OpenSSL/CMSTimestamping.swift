internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// CMS plumbing for signature timestamps: SignerInfos, their signature values, their
/// `id-aa-signatureTimeStampToken` attributes (RFC 5126 / ETSI EN 319 122-1 5.3), and adding one.
package enum CMSTimestamping {
    /// Parses DER, BER or PEM (`CMS` / `PKCS7`) SignedData.
    /// - Throws: `.malformedInput` for anything else.
    package static func parse(_ bytes: [UInt8]) throws -> CMSContentInfoHandle {
        OpenSSLErrorQueue.clear()
        var raw: OpaquePointer?
        if bytes.starts(with: Array("-----BEGIN".utf8)) {
            let der = try CMSContentInfoHandle.derFromPEM(bytes)
            guard let der, der.first == 0x30 else {
                throw CertificateProviderError.malformedInput("the PEM block is not a CMS signature")
            }
            return try parse(der)
        } else {
            raw = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                guard buffer.count > 0 else { return nil }
                var cursor = buffer.baseAddress
                guard let parsed = d2i_CMS_ContentInfo(nil, &cursor, buffer.count) else { return nil }
                guard let cursor, let base = buffer.baseAddress, cursor - base == buffer.count else {
                    CMS_ContentInfo_free(parsed)
                    return nil
                }
                return parsed
            }
        }
        guard let raw else {
            throw OpenSSLErrorQueue.error(
                .malformedInput,
                "the data is not a CMS signature (corrupt, truncated or another format)"
            )
        }
        let cms = CMSContentInfoHandle(takingOwnershipOf: raw)
        guard OBJ_obj2nid(CMS_get0_type(raw)) == NID_pkcs7_signed, cms.firstSignerInfo != nil else {
            throw CertificateProviderError.malformedInput("the CMS structure is not SignedData with a signer")
        }
        if let excess = SignedDataLimits.excess(of: cms) { throw CertificateProviderError.malformedInput(excess) }
        return cms
    }

    /// Every SignerInfo, in order (borrowed from `cms`).
    package static func signerInfos(of cms: CMSContentInfoHandle) throws -> [OpaquePointer] {
        guard let infos = CMS_get0_SignerInfos(cms.pointer) else {
            throw CertificateProviderError.malformedInput("the signature has no SignerInfos")
        }
        return (0..<COpenSSLShims_sk_CMS_SignerInfo_num(infos)).compactMap {
            COpenSSLShims_sk_CMS_SignerInfo_value(infos, $0)
        }
    }

    /// The signature value of a SignerInfo: what a signature timestamp's imprint covers.
    package static func signatureValue(of signerInfo: OpaquePointer) -> [UInt8] {
        guard let value = CMS_SignerInfo_get0_signature(signerInfo), let data = ASN1_STRING_get0_data(value) else {
            return []
        }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(value))))
    }

    /// The DER of every signature timestamp token in a SignerInfo's unsigned attributes (each
    /// attribute value, every attribute of that type).
    package static func tokens(of signerInfo: OpaquePointer) -> [[UInt8]] {
        sequences(of: signerInfo, attribute: OBJ_nid2obj(NID_id_smime_aa_timeStampToken))
    }

    /// The DER of each value of every unsigned attribute `object` of a SignerInfo (a value that is
    /// not a SEQUENCE gives an empty element, so counts stay right).
    package static func sequences(of signerInfo: OpaquePointer, attribute object: OpaquePointer?) -> [[UInt8]] {
        guard let object else { return [] }
        var values: [[UInt8]] = []
        var last: Int32 = -1
        while true {
            last = CMS_unsigned_get_attr_by_OBJ(signerInfo, object, last)
            guard last >= 0, let attribute = CMS_unsigned_get_attr(signerInfo, last) else { break }
            for index in 0..<X509_ATTRIBUTE_count(attribute) {
                guard let value = X509_ATTRIBUTE_get0_type(attribute, index), value.pointee.type == V_ASN1_SEQUENCE,
                    let sequence = value.pointee.value.sequence, let data = sequence.pointee.data
                else {
                    values.append([])
                    continue
                }
                values.append(Array(UnsafeBufferPointer(start: data, count: Int(sequence.pointee.length))))
            }
        }
        ERR_clear_error()
        return values
    }

    /// Adds a token as the unsigned attribute `id-aa-signatureTimeStampToken`.
    package static func addToken(_ token: [UInt8], to signerInfo: OpaquePointer) throws {
        guard !token.isEmpty, token.count <= Int(Int32.max),
            CMS_unsigned_add1_attr_by_OBJ(
                signerInfo,
                OBJ_nid2obj(NID_id_smime_aa_timeStampToken),
                V_ASN1_SEQUENCE,
                token,
                Int32(token.count)
            ) == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not add the signature timestamp to the SignerInfo")
        }
    }
}
