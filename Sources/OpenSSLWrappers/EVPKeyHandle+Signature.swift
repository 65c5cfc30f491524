internal import COpenSSL

extension EVPKeyHandle {
    /// How a signature is made or checked with a key's `EVP_PKEY_CTX`.
    package struct SignatureParameters {
        /// The signature's digest (`EVP_MD`).
        package var md: OpaquePointer
        /// Whether the digest is set on the context: the gost engine takes none (the key's size fixes it).
        package var setsDigest: Bool
        /// For RSA keys, whether the padding is RSASSA-PSS (true) or PKCS#1 v1.5 (false); nil for other keys.
        package var rsaPSS: Bool?

        /// Parameters for a signature over a digest made with `md`.
        package init(md: OpaquePointer, setsDigest: Bool, rsaPSS: Bool?) {
            self.md = md
            self.setsDigest = setsDigest
            self.rsaPSS = rsaPSS
        }
    }

    /// Which step of signing OpenSSL refused (its error queue says why).
    package enum SigningFailure: Error {
        /// No signing context could be made.
        case context
        /// The key cannot sign digests of this kind.
        case initialization
        /// The RSA padding mode.
        case padding
        /// The RSA-PSS salt length or MGF1 digest.
        case pssParameters
        /// The signature's size could not be computed.
        case sizing
        /// The signature itself.
        case signing
    }

    /// Signs a precomputed digest with this (private) key.
    /// - Throws: which step OpenSSL refused.
    package func sign(digest: [UInt8], _ parameters: SignatureParameters) throws(SigningFailure) -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new(pointer, nil) else { throw .context }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_sign_init(context) == 1,
            !parameters.setsDigest || EVP_PKEY_CTX_set_signature_md(context, parameters.md) == 1
        else { throw .initialization }
        if let pss = parameters.rsaPSS {
            do { try RSAPadding.configure(context, pss: pss, md: parameters.md) } catch {
                switch error {
                case .padding: throw .padding
                case .pssParameters: throw .pssParameters
                }
            }
        }
        var length = 0
        guard EVP_PKEY_sign(context, nil, &length, digest, digest.count) == 1 else { throw .sizing }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_sign(context, &signature, &length, digest, digest.count) == 1 else { throw .signing }
        return Array(signature.prefix(length))
    }

    /// Whether `signature` is a signature of the precomputed `digest` by this key's private half.
    /// Leaves OpenSSL's error queue empty.
    package func isValidSignature(
        _ signature: [UInt8],
        forDigest digest: [UInt8],
        _ parameters: SignatureParameters
    )
        -> Bool
    {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let context = EVP_PKEY_CTX_new(pointer, nil) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_verify_init(context) == 1,
            !parameters.setsDigest || EVP_PKEY_CTX_set_signature_md(context, parameters.md) == 1
        else { return false }
        if let pss = parameters.rsaPSS {
            do { try RSAPadding.configure(context, pss: pss, md: parameters.md) } catch { return false }
        }
        return EVP_PKEY_verify(context, signature, signature.count, digest, digest.count) == 1
    }
}
