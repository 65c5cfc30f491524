import CMS
internal import COpenSSL
import CertificateProviders
internal import OpenSSLWrappers

/// RFC 5652 §5.3 and §11: signed attributes carry exactly one contentType and one messageDigest
/// attribute, each with one value, and the contentType names the encapsulated content's type
/// (`eContentType`). Checked before the signature value, so a malformed set is reported as such
/// and not as an altered signature.
enum SignedAttributesCheck {
    /// Why the signer's signed attributes break those rules; nil when they keep them or the signer
    /// has none (its value signs the content itself).
    /// - Parameters:
    ///   - info: the SignerInfo.
    ///   - eContentType: the encapsulated content's type, as a dotted OID.
    static func failure(_ info: OpaquePointer, eContentType: String?) -> VerificationFailure? {
        guard CMS_signed_get_attr_count(info) > 0 else { return nil }
        var contentType: String?
        for (nid, name) in [(NID_pkcs9_contentType, "contentType"), (NID_pkcs9_messageDigest, "messageDigest")] {
            var locations: [Int32] = []
            var location = CMS_signed_get_attr_by_NID(info, nid, -1)
            while location >= 0, locations.count < 8 {
                locations.append(location)
                location = CMS_signed_get_attr_by_NID(info, nid, location)
            }
            let values = locations.first.flatMap { CMS_signed_get_attr(info, $0) }.map(X509_ATTRIBUTE_count) ?? 0
            guard locations.count == 1, values == 1 else {
                let what =
                    locations.count == 1
                    ? "one \(name) attribute with \(values) values" : "\(locations.count) \(name) attributes"
                return VerificationFailure(
                    .malformed,
                    "the signed attributes hold \(what); RFC 5652 allows exactly one, with one value: the signature is malformed"
                )
            }
            if nid == NID_pkcs9_contentType, let attribute = CMS_signed_get_attr(info, locations[0]),
                let value = X509_ATTRIBUTE_get0_type(attribute, 0), value.pointee.type == V_ASN1_OBJECT
            {
                contentType = objectText(value.pointee.value.object)
            }
        }
        guard let contentType, contentType == eContentType else {
            return VerificationFailure(
                .malformed,
                "the contentType signed attribute (\(contentType ?? "not an object identifier")) is not the type of "
                    + "the signed content (\(eContentType ?? "unknown")); RFC 5652 §11.1 requires them to be equal: the "
                    + "signature is malformed"
            )
        }
        return nil
    }

    /// An object identifier as dotted text.
    static func objectText(_ object: OpaquePointer?) -> String? {
        object.flatMap(ASN1Object.dotted)
    }
}
