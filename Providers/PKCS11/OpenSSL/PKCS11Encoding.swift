internal import COpenSSL
internal import COpenSSLShims
import CertificateProviders
internal import OpenSSLWrappers

/// The DER a token's raw mechanisms need around them, made by OpenSSL (never by hand):
/// a DigestInfo for `CKM_RSA_PKCS`, an `ECDSA-Sig-Value` from `CKM_ECDSA`'s r‖s, and the public
/// key parts of a certificate to compare with the token's key attributes.
enum PKCS11Encoding {
    /// The DER DigestInfo (RFC 8017 §9.2) of `digest`: what `CKM_RSA_PKCS` signs for PKCS#1 v1.5.
    static func digestInfo(_ digest: [UInt8], algorithm: DigestAlgorithm) throws -> [UInt8] {
        OpenSSLErrorQueue.clear()
        guard let info = X509_SIG_new() else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not allocate a DigestInfo")
        }
        defer { X509_SIG_free(info) }
        var algorithmIdentifier: UnsafeMutablePointer<X509_ALGOR>?
        var octets: UnsafeMutablePointer<ASN1_OCTET_STRING>?
        X509_SIG_getm(info, &algorithmIdentifier, &octets)
        guard let algorithmIdentifier, let octets,
            X509_ALGOR_set0(algorithmIdentifier, OBJ_nid2obj(EVP_MD_get_type(try algorithm.evpMD())), V_ASN1_NULL, nil)
                == 1,
            ASN1_OCTET_STRING_set(octets, digest, Int32(digest.count)) == 1
        else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not build the \(algorithm) DigestInfo")
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_SIG(info, &output)
        guard length > 0, let output else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not encode the DigestInfo")
        }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// The DER `ECDSA-Sig-Value` for the raw r‖s (two equal halves) that `CKM_ECDSA` returns.
    static func ecdsaSignatureDER(raw: [UInt8]) throws -> [UInt8] {
        guard !raw.isEmpty, raw.count % 2 == 0 else {
            throw CertificateProviderError(
                .cryptoFailure,
                "the token returned an ECDSA signature of \(raw.count) bytes, not r and s of equal length"
            )
        }
        OpenSSLErrorQueue.clear()
        let half = raw.count / 2
        guard let signature = ECDSA_SIG_new() else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not allocate an ECDSA signature")
        }
        defer { ECDSA_SIG_free(signature) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(half), nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + half, Int32(half), nil) }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not read the token's ECDSA r and s")
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(signature, &output)
        guard length > 0, let output else {
            throw OpenSSLErrorQueue.error(.cryptoFailure, "could not encode the ECDSA signature")
        }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// The RSA modulus of `certificate` (big-endian, no leading zeros), nil for other keys.
    static func rsaModulus(of certificate: Certificate) -> [UInt8]? {
        guard let key = X509_get0_pubkey(certificate.handle.pointer) else {
            ERR_clear_error()
            return nil
        }
        var modulus: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, "n", &modulus) == 1, let modulus else {
            ERR_clear_error()
            return nil
        }
        defer { BN_free(modulus) }
        var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(modulus) + 7) / 8))
        _ = BN_bn2bin(modulus, &bytes)
        return bytes
    }

    /// The uncompressed EC point of `certificate`'s key, nil for other keys.
    static func ecPoint(of certificate: Certificate) -> [UInt8]? {
        guard let key = X509_get0_pubkey(certificate.handle.pointer) else {
            ERR_clear_error()
            return nil
        }
        var length = 0
        guard EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", nil, 0, &length) == 1, length > 0 else {
            ERR_clear_error()
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", &bytes, length, &length) == 1 else {
            ERR_clear_error()
            return nil
        }
        return Array(bytes.prefix(length))
    }

    /// The DER OID of `certificate`'s EC curve (what `CKA_EC_PARAMS` holds for a named curve), nil for other keys.
    static func ecParameters(of certificate: Certificate) -> [UInt8]? {
        guard let key = X509_get0_pubkey(certificate.handle.pointer) else {
            ERR_clear_error()
            return nil
        }
        var name = [CChar](repeating: 0, count: 80)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else {
            ERR_clear_error()
            return nil
        }
        let nid = OBJ_sn2nid(name)
        guard nid != NID_undef, let object = OBJ_nid2obj(nid) else {
            ERR_clear_error()
            return nil
        }
        var output: UnsafeMutablePointer<UInt8>?
        let size = i2d_ASN1_OBJECT(object, &output)
        guard size > 0, let output else {
            ERR_clear_error()
            return nil
        }
        defer { COpenSSLShims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// The contents of a DER OCTET STRING (`CKA_EC_POINT` wraps the point in one), or the bytes as
    /// they are when they are not one (some modules return the bare point).
    static func unwrapOctetString(_ der: [UInt8]) -> [UInt8] {
        let decoded: [UInt8]? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let octets = d2i_ASN1_OCTET_STRING(nil, &cursor, buffer.count) else { return nil }
            defer { ASN1_OCTET_STRING_free(octets) }
            guard cursor == buffer.baseAddress! + buffer.count, let data = ASN1_STRING_get0_data(octets) else {
                return nil
            }
            return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(octets))))
        }
        ERR_clear_error()
        return decoded ?? der
    }
}
