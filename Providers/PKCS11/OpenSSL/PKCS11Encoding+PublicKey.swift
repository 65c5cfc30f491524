internal import COpenSSL
import CertificateProviders
internal import OpenSSLWrappers

/// The public key of a token key that has no certificate, made by OpenSSL from the key objects'
/// attributes (`EVP_PKEY_fromdata`), for a certificate request.
extension PKCS11Encoding {
    /// The public half of a key: its SubjectPublicKeyInfo as OpenSSL encodes it, its algorithm and size.
    struct PublicKey {
        let derRepresentation: [UInt8]
        let algorithm: PublicKeyAlgorithm
        let keySize: Int
    }

    /// `EVP_PKEY_PUBLIC_KEY` (the public key with all its parameters), a macro Swift cannot import:
    /// `OSSL_KEYMGMT_SELECT_ALL_PARAMETERS | OSSL_KEYMGMT_SELECT_PUBLIC_KEY`.
    private static let selectPublicKey =
        Int32(OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS)
        | Int32(OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS) | Int32(OSSL_KEYMGMT_SELECT_PUBLIC_KEY)

    /// An RSA public key from `CKA_MODULUS` and `CKA_PUBLIC_EXPONENT` (big-endian).
    /// - Throws: `.malformedInput` when OpenSSL refuses the values.
    static func rsaPublicKey(modulus: [UInt8], exponent: [UInt8]) throws -> PublicKey {
        try publicKey(
            type: "RSA",
            what: "the RSA modulus and exponent",
            [.number("n", modulus), .number("e", exponent)]
        )
    }

    /// An EC public key from `CKA_EC_PARAMS` (the curve's DER OID) and the point of `CKA_EC_POINT`.
    /// - Throws: `.unsupportedAlgorithm` for a curve OpenSSL does not name; `.malformedInput` when
    ///   OpenSSL refuses the point.
    static func ecPublicKey(parameters: [UInt8], point: [UInt8]) throws -> PublicKey {
        let nid: Int32 = parameters.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let object = d2i_ASN1_OBJECT(nil, &cursor, buffer.count) else { return NID_undef }
            defer { ASN1_OBJECT_free(object) }
            return OBJ_obj2nid(object)
        }
        guard nid != NID_undef, let name = OBJ_nid2sn(nid) else {
            ERR_clear_error()
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "the token key's CKA_EC_PARAMS names no curve OpenSSL knows (only named curves are supported)"
            )
        }
        let curve = String(cString: name)
        return try publicKey(
            type: "EC",
            what: "the EC point on curve \(curve)",
            [.text("group", curve), .octets("pub", point)]
        )
    }

    /// One value of an `OSSL_PARAM` array.
    private enum Parameter {
        /// An unsigned integer, big-endian.
        case number(String, [UInt8])
        case text(String, String)
        case octets(String, [UInt8])
    }

    /// The key OpenSSL makes of `type` from `parameters` (`EVP_PKEY_fromdata`); every C buffer the
    /// `OSSL_PARAM` array points at lives until the key is made.
    private static func publicKey(type: String, what: String, _ parameters: [Parameter]) throws -> PublicKey {
        ERR_clear_error()
        var allocations: [UnsafeMutableRawPointer] = []
        defer { for allocation in allocations { free(allocation) } }
        func copy(_ bytes: [UInt8]) throws -> UnsafeMutablePointer<UInt8> {
            guard let raw = malloc(max(bytes.count, 1)) else {
                throw CertificateProviderError(.cryptoFailure, "out of memory")
            }
            allocations.append(raw)
            let buffer = raw.assumingMemoryBound(to: UInt8.self)
            bytes.withUnsafeBufferPointer {
                if let base = $0.baseAddress { buffer.update(from: base, count: bytes.count) }
            }
            return buffer
        }
        func name(_ text: String) throws -> UnsafeMutablePointer<CChar> {
            guard let copied = strdup(text) else { throw CertificateProviderError(.cryptoFailure, "out of memory") }
            allocations.append(UnsafeMutableRawPointer(copied))
            return copied
        }
        var array: [OSSL_PARAM] = []
        for parameter in parameters {
            switch parameter {
            case .number(let key, let bigEndian):
                // OSSL_PARAM integers are in native byte order: BN_bn2nativepad converts.
                guard let number = BN_bin2bn(bigEndian, Int32(bigEndian.count), nil) else {
                    throw OpenSSLErrorQueue.error(.malformedInput, "OpenSSL cannot read \(what) of the token key")
                }
                defer { BN_free(number) }
                let size = max(Int((BN_num_bits(number) + 7) / 8), 1)
                let buffer = try copy([UInt8](repeating: 0, count: size))
                guard BN_bn2nativepad(number, buffer, Int32(size)) == Int32(size) else {
                    throw OpenSSLErrorQueue.error(.malformedInput, "OpenSSL cannot read \(what) of the token key")
                }
                array.append(OSSL_PARAM_construct_BN(try name(key), buffer, size))
            case .text(let key, let value):
                array.append(OSSL_PARAM_construct_utf8_string(try name(key), try name(value), 0))
            case .octets(let key, let bytes):
                array.append(OSSL_PARAM_construct_octet_string(try name(key), try copy(bytes), bytes.count))
            }
        }
        array.append(OSSL_PARAM_construct_end())
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "OpenSSL has no \(type) key type")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
            EVP_PKEY_fromdata(context, &key, selectPublicKey, &array) == 1, let key
        else {
            throw OpenSSLErrorQueue.error(.malformedInput, "OpenSSL cannot make a public key from \(what)")
        }
        let handle = EVPKeyHandle(takingOwnershipOf: key)
        return PublicKey(
            derRepresentation: handle.publicKeyDER,
            algorithm: handle.algorithm,
            keySize: Int(EVP_PKEY_get_bits(handle.pointer))
        )
    }
}
