internal import COpenSSL
internal import COpenSSLShims

/// Owns one OpenSSL `EVP_PKEY*` and frees it in `deinit`.
///
/// `@unchecked Sendable`: the key is never mutated after creation; OpenSSL 3 allows concurrent
/// signing with one `EVP_PKEY` as long as each operation uses its own `EVP_PKEY_CTX`, which every
/// caller in this package does.
package final class EVPKeyHandle: @unchecked Sendable {
    /// The owned key; borrowed by callers for the duration of a call.
    package let pointer: OpaquePointer

    /// Takes ownership of `pointer`; it is freed with `EVP_PKEY_free`.
    package init(takingOwnershipOf pointer: OpaquePointer) { self.pointer = pointer }

    /// Adds a reference to `pointer` (`EVP_PKEY_up_ref`) and owns that reference.
    package init(copying pointer: OpaquePointer) {
        EVP_PKEY_up_ref(pointer)
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }

    /// The algorithm and curve (or GOST parameter set) of an `EVP_PKEY`.
    package static func algorithm(of key: OpaquePointer) -> PublicKeyAlgorithm {
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA, EVP_PKEY_RSA_PSS: return .rsa
        case EVP_PKEY_ED25519: return .ed25519
        case NID_id_GostR3410_2012_256, NID_id_GostR3410_2012_512:
            let nid = COpenSSLShims_GOST_key_paramset_nid(key)
            let parameterSet = nid == NID_undef ? nil : OBJ_nid2sn(nid).map { String(cString: $0) }
            return .gostR34102012(
                bits: EVP_PKEY_get_base_id(key) == NID_id_GostR3410_2012_256 ? 256 : 512,
                parameterSet: parameterSet
            )
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 80)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return PublicKeyAlgorithm("EC") }
            switch String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) {
            case "prime256v1", "P-256": return .ecP256
            case "secp384r1", "P-384": return .ecP384
            case "secp521r1", "P-521": return .ecP521
            case let other: return PublicKeyAlgorithm("EC \(other)")
            }
        default:
            if let name = OBJ_nid2sn(EVP_PKEY_get_base_id(key)) { return PublicKeyAlgorithm(String(cString: name)) }
            return PublicKeyAlgorithm("unknown")
        }
    }

    /// The DER SubjectPublicKeyInfo of an `EVP_PKEY`.
    package static func publicKeyDER(of key: OpaquePointer) -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(key, &output)
        guard length > 0, let output else {
            ERR_clear_error()
            return []
        }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}
