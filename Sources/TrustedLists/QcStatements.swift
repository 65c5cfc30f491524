internal import COpenSSL
internal import COpenSSLShims
public import CertificateProviders
internal import OpenSSLWrappers

/// A certificate's ETSI EN 319 412-5 QcStatements (extension 1.3.6.1.5.5.7.1.3): whether it claims
/// to be an EU qualified certificate, on a qualified signature creation device, and of which type.
public struct QcStatements: Sendable, Hashable {
    /// `QcType` esign: a certificate for electronic signatures (natural persons).
    public static let eSignatureType = "0.4.0.1862.1.6.1"
    /// `QcType` eseal: a certificate for electronic seals (legal persons).
    public static let eSealType = "0.4.0.1862.1.6.2"
    /// `QcType` web: a certificate for website authentication.
    public static let webType = "0.4.0.1862.1.6.3"

    /// `QcCompliance` (0.4.0.1862.1.1): issued as an EU qualified certificate.
    public let isQualifiedCertificate: Bool
    /// `QcSSCD` (0.4.0.1862.1.4): its private key is on a qualified signature/seal creation device.
    public let isOnQualifiedDevice: Bool
    /// The `QcType` OIDs (empty when the statement is absent).
    public let types: [String]

    /// Reads the statements of `certificate` with OpenSSL's generic ASN.1 decoder; a certificate
    /// without the extension (or with one that does not decode) has none.
    public init(certificate: Certificate) {
        let statements = Self.statements(certificate)
        isQualifiedCertificate = statements.contains { $0.id == "0.4.0.1862.1.1" }
        isOnQualifiedDevice = statements.contains { $0.id == "0.4.0.1862.1.4" }
        types = statements.first { $0.id == "0.4.0.1862.1.6" }?.values ?? []
    }

    /// The certificate's type: its one `QcType`, esign when it states none (EN 319 412-5), nil when
    /// it states several.
    public var type: String? {
        switch types.count {
        case 0: Self.eSignatureType
        case 1: types[0]
        default: nil
        }
    }

    /// Each statement's OID, and for one whose information is a sequence of OIDs (QcType), those.
    private static func statements(_ certificate: Certificate) -> [(id: String, values: [String])] {
        let x509 = certificate.handle.pointer
        guard let oid = OBJ_txt2obj("1.3.6.1.5.5.7.1.3", 1) else { return [] }
        defer { ASN1_OBJECT_free(oid) }
        let index = X509_get_ext_by_OBJ(x509, oid, -1)
        guard index >= 0, let data = X509_EXTENSION_get_data(X509_get_ext(x509, index)) else { return [] }
        return withSequence(data.pointee.data, Int(data.pointee.length)) { elements in
            elements.compactMap { statement -> (id: String, values: [String])? in
                guard statement.pointee.type == V_ASN1_SEQUENCE, let body = statement.pointee.value.sequence else {
                    return nil
                }
                return withSequence(body.pointee.data, Int(body.pointee.length)) { parts in
                    guard let first = parts.first, first.pointee.type == V_ASN1_OBJECT,
                        let id = first.pointee.value.object.flatMap(ASN1Object.dotted)
                    else { return nil }
                    guard parts.count > 1, parts[1].pointee.type == V_ASN1_SEQUENCE,
                        let info = parts[1].pointee.value.sequence
                    else { return (id, []) }
                    let values = withSequence(info.pointee.data, Int(info.pointee.length)) { items in
                        items.compactMap { item in
                            item.pointee.type == V_ASN1_OBJECT
                                ? item.pointee.value.object.flatMap(ASN1Object.dotted) : nil
                        }
                    }
                    return (id, values ?? [])
                } ?? nil
            }
        } ?? []
    }

    /// Decodes a DER SEQUENCE and gives its elements to `body` while they are alive; nil when the
    /// bytes are not a SEQUENCE.
    private static func withSequence<T>(
        _ bytes: UnsafeMutablePointer<UInt8>?,
        _ length: Int,
        _ body: ([UnsafeMutablePointer<ASN1_TYPE>]) -> T
    ) -> T? {
        var cursor = UnsafePointer(bytes)
        guard let stack = d2i_ASN1_SEQUENCE_ANY(nil, &cursor, length) else {
            ERR_clear_error()
            return nil
        }
        defer { COpenSSLShims_sk_ASN1_TYPE_pop_free(stack) }
        return body(
            (0..<COpenSSLShims_sk_ASN1_TYPE_num(stack)).compactMap { COpenSSLShims_sk_ASN1_TYPE_value(stack, $0) }
        )
    }
}
