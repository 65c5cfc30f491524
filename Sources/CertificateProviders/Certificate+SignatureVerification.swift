package import OpenSSLWrappers

extension Certificate {
    /// Whether `signature` is a signature of the precomputed `digest` by the private half of this
    /// certificate's public key: what a client checks before it puts a signature value made
    /// elsewhere (a remote service, a token) into a container.
    ///
    /// RSA PKCS#1 v1.5 signatures are checked over the DigestInfo of `digest`, RSA-PSS with MGF1 of
    /// the same digest and a salt as long as the digest, ECDSA signatures as DER `ECDSA-Sig-Value`s,
    /// GOST R 34.10-2012 signatures as raw values over the key's Streebog digest (the ``SigningKey``
    /// contract).
    /// - Parameters:
    ///   - signature: the signature value.
    ///   - digest: the digest that was signed.
    ///   - digestAlgorithm: the algorithm `digest` was made with.
    ///   - scheme: the signature scheme.
    /// - Returns: false for a wrong signature, a digest of the wrong length, or a scheme that does not
    ///   fit the key; never throws.
    public func isValidSignature(
        _ signature: [UInt8],
        forDigest digest: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) -> Bool {
        guard let publicKey = handle.publicKey else { return false }
        return Self.isValidSignature(
            signature,
            forDigest: digest,
            digestAlgorithm: digestAlgorithm,
            scheme: scheme,
            publicKey: publicKey,
            algorithm: publicKeyAlgorithm
        )
    }

    /// ``isValidSignature(_:forDigest:digestAlgorithm:scheme:)`` with a public key held by OpenSSL
    /// (a certificate's, or a key a service returned without a certificate), borrowed for the call.
    /// - Parameter algorithm: `publicKey`'s algorithm (`EVPKeyHandle.algorithm`).
    package static func isValidSignature(
        _ signature: [UInt8],
        forDigest digest: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme,
        publicKey: EVPKeyHandle,
        algorithm publicKeyAlgorithm: PublicKeyAlgorithm
    ) -> Bool {
        defer { OpenSSLErrorQueue.clear() }
        let isGOST = publicKeyAlgorithm.isGOST
        let fits: Bool
        if publicKeyAlgorithm.isRSA {
            fits = scheme == .rsaPKCS1v15 || scheme == .rsaPSS
        } else if isGOST {
            // A GOST key signs only the Streebog digest of its size (DigestAlgorithm.preferred).
            fits =
                scheme == .gostR34102012 && (try? DigestAlgorithm.preferred(for: publicKeyAlgorithm)) == digestAlgorithm
        } else {
            fits = publicKeyAlgorithm.isEC && scheme == .ecdsa && !digestAlgorithm.isGOST
        }
        guard fits, !signature.isEmpty, digest.count == digestAlgorithm.outputByteCount,
            let parameters = try? digestAlgorithm.signatureParameters(scheme: scheme, keyAlgorithm: publicKeyAlgorithm)
        else { return false }
        return publicKey.isValidSignature(signature, forDigest: digest, parameters)
    }
}

extension DigestAlgorithm {
    /// How OpenSSL makes or checks a `scheme` signature over a digest of this algorithm with a key
    /// of `keyAlgorithm`: the gost engine takes no digest setting (the key's size fixes it), RSA
    /// takes its padding.
    /// - Throws: `.unsupportedAlgorithm` when OpenSSL cannot compute this digest.
    package func signatureParameters(
        scheme: SignatureScheme,
        keyAlgorithm: PublicKeyAlgorithm
    ) throws -> EVPKeyHandle.SignatureParameters {
        EVPKeyHandle.SignatureParameters(
            md: try evpMD(),
            setsDigest: !keyAlgorithm.isGOST,
            rsaPSS: keyAlgorithm.isRSA ? scheme == .rsaPSS : nil
        )
    }
}
