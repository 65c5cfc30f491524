internal import COpenSSL
internal import COpenSSLShims
package import Foundation

extension X509Handle {
    /// The subject as RFC 2253 text with UTF-8 kept as is; an empty name is "".
    /// - Throws: `OpenSSLError` (`.malformedInput`) when OpenSSL cannot read or print the name.
    package func subjectName() throws -> String {
        try Self.rfc2253(X509_get_subject_name(pointer), field: "subject")
    }

    /// The issuer as RFC 2253 text with UTF-8 kept as is; an empty name is "".
    /// - Throws: `OpenSSLError` (`.malformedInput`) when OpenSSL cannot read or print the name.
    package func issuerName() throws -> String {
        try Self.rfc2253(X509_get_issuer_name(pointer), field: "issuer")
    }

    /// Whether subject and issuer are the same name.
    package var isSelfIssued: Bool {
        X509_NAME_cmp(X509_get_subject_name(pointer), X509_get_issuer_name(pointer)) == 0
    }

    /// Start of validity, or nil when it cannot be read.
    package var notBefore: Date? { X509_get0_notBefore(pointer).flatMap { ASN1Time.date(of: $0) } }

    /// End of validity, or nil when it cannot be read.
    package var notAfter: Date? { X509_get0_notAfter(pointer).flatMap { ASN1Time.date(of: $0) } }

    /// The public key (an up-ref of the certificate's own), or nil when OpenSSL cannot decode it.
    package var publicKey: EVPKeyHandle? { X509_get0_pubkey(pointer).map { EVPKeyHandle(copying: $0) } }

    /// The key usage bits (OpenSSL's `KU_*` values), or nil when the certificate has no such extension.
    package var keyUsageBits: UInt32? {
        (X509_get_extension_flags(pointer) & UInt32(EXFLAG_KUSAGE)) != 0 ? X509_get_key_usage(pointer) : nil
    }

    /// Whether the basic constraints mark the certificate as a CA.
    package var isCertificateAuthority: Bool { (X509_get_extension_flags(pointer) & UInt32(EXFLAG_CA)) != 0 }

    /// The serial number in upper-case hexadecimal without leading zeros.
    /// - Throws: `OpenSSLError` (`.malformedInput`) when it is missing or cannot be converted.
    package func serialNumberHex() throws -> String {
        guard let serial = X509_get0_serialNumber(pointer), let bignum = ASN1_INTEGER_to_BN(serial, nil) else {
            throw OpenSSLError(.malformedInput, "the certificate's serial number cannot be read")
        }
        defer { BN_free(bignum) }
        guard let hex = BN_bn2hex(bignum) else {
            throw OpenSSLError(.malformedInput, "the certificate's serial number cannot be converted")
        }
        defer { COpenSSLShims_OPENSSL_free(hex) }
        // BN_bn2hex writes whole bytes ("0A1B…"); the documented form has no leading zeros.
        let digits = String(cString: hex)
        let trimmed = digits.drop(while: { $0 == "0" })
        return trimmed.isEmpty ? "0" : String(trimmed)
    }

    /// The dotted OID of the SubjectPublicKeyInfo's algorithm, read without decoding the key.
    package var publicKeyAlgorithmOID: String? {
        var object: OpaquePointer?
        guard let publicKey = X509_get_X509_PUBKEY(pointer),
            X509_PUBKEY_get0_param(&object, nil, nil, nil, publicKey) == 1, let object
        else { return nil }
        return ASN1Object.dotted(object)
    }

    /// The dotted OIDs of the extended key usage purposes; empty without the extension.
    package var extendedKeyUsageOIDs: [String] {
        guard let raw = X509_get_ext_d2i(pointer, NID_ext_key_usage, nil, nil) else { return [] }
        let stack = OpaquePointer(raw)
        defer { COpenSSLShims_sk_ASN1_OBJECT_pop_free(stack) }
        return (0..<COpenSSLShims_sk_ASN1_OBJECT_num(stack)).compactMap { index in
            COpenSSLShims_sk_ASN1_OBJECT_value(stack, index).flatMap(ASN1Object.dotted)
        }
    }

    /// The value of the first subject attribute with OpenSSL's short name `shortName` (`CN`, `O`, …)
    /// as UTF-8, or nil.
    package func subjectAttribute(_ shortName: String) -> String? {
        let nid = OBJ_txt2nid(shortName)
        guard nid != NID_undef, let name = X509_get_subject_name(pointer) else { return nil }
        let index = X509_NAME_get_index_by_NID(name, nid, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry)
        else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else {
            ERR_clear_error()
            return nil
        }
        defer { COpenSSLShims_OPENSSL_free(utf8) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

    private static func rfc2253(_ name: OpaquePointer?, field: String) throws -> String {
        guard let name else { throw OpenSSLError(.malformedInput, "the certificate's \(field) name cannot be read") }
        guard let text = X509Name.rfc2253(name) else {
            throw OpenSSLError(.malformedInput, "the certificate's \(field) name cannot be printed")
        }
        return text
    }
}

/// OpenSSL's distinguished names (`X509_NAME`) as text.
package enum X509Name {
    /// An `X509_NAME` as RFC 2253 text with UTF-8 kept as is (most significant RDN last); an empty
    /// name is "". Nil when OpenSSL cannot print it.
    package static func rfc2253(_ name: OpaquePointer) -> String? {
        var printed: Int32 = 0
        let bytes = try? MemoryBIO.collecting { bio in
            printed = X509_NAME_print_ex(bio, name, 0, COpenSSLShims_XN_FLAG_RFC2253_UTF8())
        }
        guard let bytes, printed >= 0 else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// OpenSSL's object identifiers (`ASN1_OBJECT`) as text.
package enum ASN1Object {
    /// The whole dotted form of an `ASN1_OBJECT` (however long), or nil when OpenSSL cannot print it.
    package static func dotted(_ object: OpaquePointer) -> String? {
        var buffer = [CChar](repeating: 0, count: 128)
        var length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        if length >= buffer.count {
            // OpenSSL returns the full length and writes what fits: ask again with room for all of it.
            buffer = [CChar](repeating: 0, count: Int(length) + 1)
            length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        }
        guard length > 0, length < buffer.count else { return nil }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// OpenSSL's short name for a dotted OID (`clientAuth`), or nil when OpenSSL has none.
    package static func shortName(ofDotted oid: String) -> String? {
        let nid = OBJ_txt2nid(oid)
        guard nid != NID_undef, let name = OBJ_nid2sn(nid) else { return nil }
        return String(cString: name)
    }
}
