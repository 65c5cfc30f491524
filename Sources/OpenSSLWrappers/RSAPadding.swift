internal import COpenSSL

/// The RSA padding of a signature scheme on an OpenSSL `EVP_PKEY_CTX`: PKCS#1 v1.5, or RSASSA-PSS
/// with MGF1 over the signature's digest and a salt as long as that digest (RFC 4056). The one
/// place it is set up: keys sign with it, and certificates, keys and the CMS builder check
/// signatures with it.
package enum RSAPadding {
    /// Which step OpenSSL refused.
    package enum Failure: Error {
        /// The padding mode itself.
        case padding
        /// The PSS salt length or MGF1 digest.
        case pssParameters
    }

    /// Sets RSASSA-PSS (`pss`) or PKCS#1 v1.5 padding on `context`, a signing or verifying context
    /// of an RSA key; `md` is the signature's digest.
    /// - Throws: which step OpenSSL refused (its error queue says why).
    package static func configure(_ context: OpaquePointer, pss: Bool, md: OpaquePointer) throws(Failure) {
        guard EVP_PKEY_CTX_set_rsa_padding(context, pss ? RSA_PKCS1_PSS_PADDING : RSA_PKCS1_PADDING) == 1 else {
            throw .padding
        }
        guard pss else { return }
        guard EVP_PKEY_CTX_set_rsa_pss_saltlen(context, RSA_PSS_SALTLEN_DIGEST) == 1,
            EVP_PKEY_CTX_set_rsa_mgf1_md(context, md) == 1
        else { throw .pssParameters }
    }
}
