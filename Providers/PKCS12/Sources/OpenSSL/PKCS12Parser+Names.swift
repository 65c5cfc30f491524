internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
import Foundation
internal import OpenSSLWrappers

/// Bag attributes and the names of the algorithms a PKCS#12 file uses, for the parser and its messages.
extension PKCS12Parser {
    static func friendlyName(_ bag: OpaquePointer) -> String? {
        guard let name = PKCS12_get_friendlyname(bag) else {
            ERR_clear_error()
            return nil
        }
        defer { COpenSSLShims_OPENSSL_free(name) }
        return String(cString: name)
    }

    static func localKeyID(_ bag: OpaquePointer) -> [UInt8]? {
        guard let attribute = PKCS12_SAFEBAG_get0_attr(bag, NID_localKeyID),
            attribute.pointee.type == V_ASN1_OCTET_STRING,
            let octets = attribute.pointee.value.octet_string
        else { return nil }
        return bytes(of: octets)
    }

    static func bytes(of string: UnsafePointer<ASN1_STRING>) -> [UInt8] {
        let length = Int(ASN1_STRING_length(string))
        guard length > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }

    static func objectName(nid: Int32) -> String {
        guard nid != NID_undef, let name = OBJ_nid2ln(nid) else { return "unknown (NID \(nid))" }
        return String(cString: name)
    }

    static func objectName(object: OpaquePointer) -> String {
        let nid = OBJ_obj2nid(object)
        if nid != NID_undef, let name = OBJ_nid2ln(nid) { return String(cString: name) }
        return oid(object)
    }

    static func shortName(object: OpaquePointer) -> String {
        let nid = OBJ_obj2nid(object)
        if nid != NID_undef, let name = OBJ_nid2sn(nid) { return String(cString: name) }
        return oid(object)
    }

    static func oid(_ object: OpaquePointer) -> String {
        ASN1Object.dotted(object) ?? "unknown OID"
    }

    /// Describes a PBE / cipher `AlgorithmIdentifier`, looking into PBES2 and PBES1 parameters.
    static func describe(_ algorithm: UnsafePointer<X509_ALGOR>?) -> PKCS12File.Algorithm? {
        guard let algorithm else { return nil }
        var objectPointer: OpaquePointer?
        var parameterType: Int32 = 0
        var parameterValue: UnsafeRawPointer?
        X509_ALGOR_get0(&objectPointer, &parameterType, &parameterValue, algorithm)
        guard let object = objectPointer else { return nil }
        let name = objectName(object: object)
        let dotted = oid(object)
        let sequence: [UInt8]? =
            parameterType == V_ASN1_SEQUENCE
            ? parameterValue.map { bytes(of: $0.assumingMemoryBound(to: ASN1_STRING.self)) } : nil
        defer { ERR_clear_error() }
        if OBJ_obj2nid(object) == NID_pbes2, let sequence {
            return sequence.withUnsafeBufferPointer { buffer -> PKCS12File.Algorithm in
                var cursor = buffer.baseAddress
                guard let parameters = d2i_PBE2PARAM(nil, &cursor, buffer.count) else {
                    return PKCS12File.Algorithm(name: name, oid: dotted)
                }
                defer { PBE2PARAM_free(parameters) }
                var cipher: String?
                if let encryption = parameters.pointee.encryption, let cipherObject = encryption.pointee.algorithm {
                    cipher = shortName(object: cipherObject)
                }
                var prf: String? = nil
                var iterations: Int? = nil
                if let keyFunction = parameters.pointee.keyfunc,
                    OBJ_obj2nid(keyFunction.pointee.algorithm) == NID_id_pbkdf2,
                    let parameter = keyFunction.pointee.parameter, parameter.pointee.type == V_ASN1_SEQUENCE,
                    let kdfSequence = parameter.pointee.value.sequence
                {
                    let kdfBytes = bytes(of: kdfSequence)
                    kdfBytes.withUnsafeBufferPointer { kdfBuffer in
                        var kdfCursor = kdfBuffer.baseAddress
                        guard let kdf = d2i_PBKDF2PARAM(nil, &kdfCursor, kdfBuffer.count) else { return }
                        defer { PBKDF2PARAM_free(kdf) }
                        if let iter = kdf.pointee.iter { iterations = Int(ASN1_INTEGER_get(iter)) }
                        prf =
                            kdf.pointee.prf.flatMap { $0.pointee.algorithm }.map { shortName(object: $0) }
                            ?? "hmacWithSHA1"
                    }
                }
                return PKCS12File.Algorithm(
                    name: name,
                    oid: dotted,
                    cipher: cipher,
                    pseudoRandomFunction: prf,
                    iterations: iterations
                )
            }
        }
        var iterations: Int? = nil
        if let sequence {
            sequence.withUnsafeBufferPointer { buffer in
                var cursor = buffer.baseAddress
                guard let parameters = d2i_PBEPARAM(nil, &cursor, buffer.count) else { return }
                defer { PBEPARAM_free(parameters) }
                if let iter = parameters.pointee.iter { iterations = Int(ASN1_INTEGER_get(iter)) }
            }
        }
        return PKCS12File.Algorithm(name: name, oid: dotted, iterations: iterations)
    }

    static func macDescription(_ p12: OpaquePointer) -> (algorithm: PKCS12File.Algorithm, iterations: Int?)? {
        var algorithm: UnsafePointer<X509_ALGOR>?
        var iterations: UnsafePointer<ASN1_INTEGER>?
        PKCS12_get0_mac(nil, &algorithm, nil, &iterations, p12)
        guard let description = describe(algorithm) else { return nil }
        return (description, iterations.map { Int(ASN1_INTEGER_get($0)) } ?? 1)
    }
}
