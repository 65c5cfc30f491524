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

    /// What kind of key an `EVP_PKEY` is, as OpenSSL names it.
    package enum KeyType: Sendable, Hashable {
        /// RSA (plain or RSA-PSS restricted).
        case rsa
        /// Ed25519.
        case ed25519
        /// GOST R 34.10-2012 of `bits` (256 or 512), with OpenSSL's short name of its parameter set.
        case gost(bits: Int, parameterSet: String?)
        /// EC on the named group (`prime256v1`, `P-256`, …), nil when OpenSSL does not say.
        case ec(group: String?)
        /// Another algorithm, by OpenSSL's short name (`unknown` when it has none).
        case other(String)
    }

    /// The algorithm and curve (or GOST parameter set) of this key.
    package var keyType: KeyType { Self.keyType(of: pointer) }

    /// The algorithm and curve (or GOST parameter set) of an `EVP_PKEY`.
    package static func keyType(of key: OpaquePointer) -> KeyType {
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA, EVP_PKEY_RSA_PSS: return .rsa
        case EVP_PKEY_ED25519: return .ed25519
        case NID_id_GostR3410_2012_256, NID_id_GostR3410_2012_512:
            let nid = COpenSSLShims_GOST_key_paramset_nid(key)
            let parameterSet = nid == NID_undef ? nil : OBJ_nid2sn(nid).map { String(cString: $0) }
            return .gost(
                bits: EVP_PKEY_get_base_id(key) == NID_id_GostR3410_2012_256 ? 256 : 512,
                parameterSet: parameterSet
            )
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 80)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return .ec(group: nil) }
            return .ec(group: String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        default:
            if let name = OBJ_nid2sn(EVP_PKEY_get_base_id(key)) { return .other(String(cString: name)) }
            return .other("unknown")
        }
    }

    /// The key size in bits.
    package var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }

    /// The DER SubjectPublicKeyInfo of this key.
    package var publicKeyDER: [UInt8] { Self.publicKeyDER(of: pointer) }

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
