internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// CAdES `archive-time-stamp-v3` (0.4.0.1733.2.4) and its `ats-hash-index-v3` (0.4.0.19122.1.5),
/// ETSI EN 319 122-1 §5.5.2–5.5.3, as EU DSS's `CadesLevelBaselineLTATimestampExtractor` computes
/// them: the index hashes each element of `SignedData.certificates` and `SignedData.crls` and, for
/// each unsigned attribute, each `attrType ‖ attrValue`; the message imprint covers the
/// eContentType, the hash of the signed content, the SignerInfo's fields from version to
/// signature, and the index value. The same digest algorithm is used throughout and written as
/// `hashIndAlgorithm`.
package enum ArchiveTimestampAttribute {
    /// `id-aa-ets-archiveTimestampV3`.
    package static let archiveTimestampV3 = "0.4.0.1733.2.4"
    /// `id-aa-ATSHashIndex-v3`.
    package static let hashIndexV3 = "0.4.0.19122.1.5"

    /// What an archive timestamp of one SignerInfo must cover.
    package struct Input {
        /// The ATSHashIndexV3 value (DER), to go into the token's unsigned attributes.
        package var hashIndex: [UInt8]
        /// The bytes whose hash is the token's message imprint.
        package var imprintData: [UInt8]
    }

    /// The archive timestamp tokens (DER) of a SignerInfo, in order.
    package static func tokens(of signerInfo: OpaquePointer) -> [[UInt8]] {
        guard let object = OBJ_txt2obj(archiveTimestampV3, 1) else { return [] }
        defer { ASN1_OBJECT_free(object) }
        return CMSTimestamping.sequences(of: signerInfo, attribute: object).filter { !$0.isEmpty }
    }

    /// The hash index and imprint data of SignerInfo `index` of `signature` (DER SignedData), with
    /// `digest` (which must be the SignerInfo's own digest: the content's hash is its
    /// messageDigest attribute).
    /// - Throws: `.malformedInput` when the signature has no messageDigest, or it is not DER;
    ///   `.unsupportedAlgorithm` when the signer's digest is not `digest`.
    package static func input(signature: [UInt8], signerIndex: Int, digest: DigestAlgorithm) throws -> Input {
        let cms = try CMSTimestamping.parse(signature)
        let infos = try CMSTimestamping.signerInfos(of: cms)
        guard signerIndex < infos.count else { throw CertificateProviderError.malformedInput("no such signer") }
        let info = infos[signerIndex]
        let contentHash = try messageDigest(of: info, expected: digest)
        let contentType = try CMSValidationData.copyDER { i2d_ASN1_OBJECT(CMS_get0_eContentType(cms.pointer), $0) }
        let parts = try signedDataParts(signature, signerIndex: signerIndex)
        let unsignedHashes = try unsignedAttributeOctets(of: info).map { digest.hash($0) }
        let index = try encodeIndex(
            digest: digest,
            certificates: parts.certificates.map { digest.hash($0) },
            crls: parts.revocations.map { digest.hash($0) },
            unsignedAttributes: unsignedHashes
        )
        return Input(hashIndex: index, imprintData: contentType + contentHash + parts.signerFields + index)
    }

    /// The signer's messageDigest attribute (the hash of the signed content).
    private static func messageDigest(of info: OpaquePointer, expected: DigestAlgorithm) throws -> [UInt8] {
        let (algorithm, digest) = try signedDigest(of: info)
        guard algorithm == expected else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "the archive timestamp hashes with \(expected.displayName), and the signer digested the document "
                    + "with another algorithm; use a TSA digest equal to the signature's"
            )
        }
        return digest
    }

    /// The signer's digest algorithm and its messageDigest attribute.
    /// - Throws: `.unsupportedAlgorithm` for a digest outside ``DigestAlgorithm/allSupported``;
    ///   `.malformedInput` without a messageDigest.
    package static func signedDigest(of info: OpaquePointer) throws -> (DigestAlgorithm, [UInt8]) {
        var algorithmIdentifier: UnsafeMutablePointer<X509_ALGOR>?
        CMS_SignerInfo_get0_algs(info, nil, nil, &algorithmIdentifier, nil)
        var object: OpaquePointer?
        X509_ALGOR_get0(&object, nil, nil, algorithmIdentifier)
        let oid = CMSValidationData.objectIdentifier(object)
        guard let algorithm = DigestAlgorithm.allSupported.first(where: { $0.oid == oid }) else {
            throw CertificateProviderError(.unsupportedAlgorithm, "the signer's digest \(oid ?? "?") is not supported")
        }
        guard
            let raw = CMS_signed_get0_data_by_OBJ(info, OBJ_nid2obj(NID_pkcs9_messageDigest), -3, V_ASN1_OCTET_STRING)
        else {
            ERR_clear_error()
            throw CertificateProviderError.malformedInput("the signer has no messageDigest attribute")
        }
        let octets = raw.assumingMemoryBound(to: ASN1_STRING.self)
        guard let data = ASN1_STRING_get0_data(octets) else { return (algorithm, []) }
        return (algorithm, Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(octets)))))
    }

    /// The DER of each certificate and revocation entry, and the SignerInfo's fields version to
    /// signature (each with its tag and length, as they are encoded).
    private static func signedDataParts(
        _ signature: [UInt8],
        signerIndex: Int
    ) throws -> (certificates: [[UInt8]], revocations: [[UInt8]], signerFields: [UInt8]) {
        let contents = try CMSValidationData.contents(of: signature)
        guard
            let view = signature.withUnsafeBufferPointer({ COpenSSLShims_SignedDataView_d2i($0.baseAddress, $0.count) })
        else { throw CertificateProviderError.malformedInput("the signature is not DER CMS SignedData") }
        defer { COpenSSLShims_SignedDataView_free(view) }
        let signerInfo = try CMSValidationData.copyDER {
            COpenSSLShims_SignedDataView_signer_info_der(view, Int32(signerIndex), $0)
        }
        return (contents.certificates, contents.revocationEntries, try fieldsBeforeUnsignedAttributes(signerInfo))
    }

    /// The fields from version to signature of SignerInfo `signerIndex` of a DER signature.
    package static func signerFields(_ signature: [UInt8], signerIndex: Int) throws -> [UInt8] {
        try signedDataParts(signature, signerIndex: signerIndex).signerFields
    }

    /// The ats-hash-index-v3 value (DER) a token carries in its SignerInfo's unsigned attributes.
    package static func hashIndex(ofToken token: [UInt8]) -> [UInt8]? {
        guard let cms = try? CMSTimestamping.parse(token), let info = try? CMSTimestamping.signerInfos(of: cms).first,
            let object = OBJ_txt2obj(hashIndexV3, 1)
        else { return nil }
        defer { ASN1_OBJECT_free(object) }
        let position = CMS_unsigned_get_attr_by_OBJ(info, object, -1)
        defer { ERR_clear_error() }
        guard position >= 0, let attribute = CMS_unsigned_get_attr(info, position),
            let value = X509_ATTRIBUTE_get0_type(attribute, 0), value.pointee.type == V_ASN1_SEQUENCE,
            let sequence = value.pointee.value.sequence, let data = sequence.pointee.data
        else { return nil }
        return Array(UnsafeBufferPointer(start: data, count: Int(sequence.pointee.length)))
    }

    /// The content octets of a DER SignerInfo up to (not including) its `[1]` unsignedAttrs.
    private static func fieldsBeforeUnsignedAttributes(_ signerInfo: [UInt8]) throws -> [UInt8] {
        try signerInfo.withUnsafeBufferPointer { buffer -> [UInt8] in
            guard let base = buffer.baseAddress else { throw CertificateProviderError.malformedInput("empty") }
            var cursor: UnsafePointer<UInt8>? = base
            var length = 0
            var tag: Int32 = 0
            var tagClass: Int32 = 0
            guard ASN1_get_object(&cursor, &length, &tag, &tagClass, buffer.count) & 0x80 == 0, let start = cursor
            else { throw OpenSSLErrorQueue.error(.malformedInput, "the SignerInfo is not DER") }
            let end = start + length
            var fieldsEnd = end
            while let position = cursor, position < end {
                var elementLength = 0
                var next: UnsafePointer<UInt8>? = position
                guard ASN1_get_object(&next, &elementLength, &tag, &tagClass, end - position) & 0x80 == 0,
                    let content = next
                else { throw OpenSSLErrorQueue.error(.malformedInput, "the SignerInfo is not DER") }
                if tagClass == V_ASN1_CONTEXT_SPECIFIC && tag == 1 {
                    fieldsEnd = position
                    break
                }
                cursor = content + elementLength
            }
            return Array(UnsafeBufferPointer(start: start, count: fieldsEnd - start))
        }
    }

    /// For each unsigned attribute and each of its values: DER(attrType) ‖ DER(value).
    package static func unsignedAttributeOctets(of info: OpaquePointer) throws -> [[UInt8]] {
        var octets: [[UInt8]] = []
        for index in 0..<CMS_unsigned_get_attr_count(info) {
            guard let attribute = CMS_unsigned_get_attr(info, index) else { continue }
            let type = try CMSValidationData.copyDER { i2d_ASN1_OBJECT(X509_ATTRIBUTE_get0_object(attribute), $0) }
            for valueIndex in 0..<X509_ATTRIBUTE_count(attribute) {
                guard let value = X509_ATTRIBUTE_get0_type(attribute, valueIndex) else { continue }
                octets.append(type + (try CMSValidationData.copyDER { i2d_ASN1_TYPE(value, $0) }))
            }
        }
        return octets
    }

    /// The ATSHashIndexV3 value (DER), hashIndAlgorithm written.
    private static func encodeIndex(
        digest: DigestAlgorithm,
        certificates: [[UInt8]],
        crls: [[UInt8]],
        unsignedAttributes: [[UInt8]]
    ) throws -> [UInt8] {
        let nid = OBJ_txt2nid(digest.oid)
        let certificateBytes = certificates.flatMap { $0 }
        let crlBytes = crls.flatMap { $0 }
        let attributeBytes = unsignedAttributes.flatMap { $0 }
        return try CMSValidationData.copyDER { output in
            COpenSSLShims_ATSHashIndexV3_encode(
                nid,
                Int32(digest.outputByteCount),
                certificateBytes,
                Int32(certificates.count),
                crlBytes,
                Int32(crls.count),
                attributeBytes,
                Int32(unsignedAttributes.count),
                output
            )
        }
    }

    /// `token` with the ats-hash-index-v3 unsigned attribute added to its SignerInfo.
    package static func addHashIndex(_ index: [UInt8], to token: [UInt8]) throws -> [UInt8] {
        let cms = try CMSTimestamping.parse(token)
        guard let info = try CMSTimestamping.signerInfos(of: cms).first else {
            throw CertificateProviderError.malformedInput("the archive timestamp token has no signer")
        }
        try addAttribute(hashIndexV3, value: index, to: info)
        return try cms.derBytes()
    }

    /// Adds `value` (one DER SEQUENCE) as an unsigned attribute `oid` of `signerInfo`.
    package static func addAttribute(_ oid: String, value: [UInt8], to signerInfo: OpaquePointer) throws {
        guard let object = OBJ_txt2obj(oid, 1) else { throw OpenSSLErrorQueue.error(.cryptoFailure, "OBJ_txt2obj") }
        defer { ASN1_OBJECT_free(object) }
        guard !value.isEmpty, value.count <= Int(Int32.max),
            CMS_unsigned_add1_attr_by_OBJ(signerInfo, object, V_ASN1_SEQUENCE, value, Int32(value.count)) == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not add the unsigned attribute \(oid)")
        }
    }
}
