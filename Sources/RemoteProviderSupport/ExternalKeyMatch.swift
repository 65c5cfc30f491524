internal import COpenSSL
package import CertificateProviders

/// The check a provider whose key lives in a key-management service makes before its first
/// signature: the certificate the user gave must carry the service key's public key.
package enum ExternalKeyMatch {
    /// Requires `certificate`'s public key to equal the key whose DER SubjectPublicKeyInfo the
    /// service returned (re-encoded by OpenSSL first, so two encodings of one key compare equal).
    /// - Parameters:
    ///   - certificate: the certificate given for the key.
    ///   - keySubjectPublicKeyInfo: the key's public half as the service returned it.
    ///   - keyName: how the error names the key (`AWS KMS key arn:aws:kms:…`).
    /// - Throws: `.keyCertificateMismatch` naming both SHA-256 fingerprints (of the DER
    ///   SubjectPublicKeyInfo) when they differ; `.malformedInput` when the service's public key is
    ///   not a SubjectPublicKeyInfo OpenSSL reads.
    package static func requireMatch(
        certificate: Certificate,
        keySubjectPublicKeyInfo: [UInt8],
        keyName: String
    ) throws {
        let keyDER = try reencoded(keySubjectPublicKeyInfo, keyName: keyName)
        let certificateDER = certificate.publicKeyDERRepresentation
        guard keyDER != certificateDER else { return }
        throw CertificateProviderError(
            .keyCertificateMismatch,
            "the certificate '\(certificate.subject)' is not for \(keyName): the certificate's public key has "
                + "SHA-256 fingerprint \(fingerprint(certificateDER)), the key's \(fingerprint(keyDER)); give the "
                + "certificate issued for this key"
        )
    }

    /// `der` parsed by OpenSSL (`d2i_PUBKEY`) and encoded again (`i2d_PUBKEY`).
    /// - Throws: `.malformedInput` when OpenSSL cannot read it.
    package static func reencoded(_ der: [UInt8], keyName: String) throws -> [UInt8] {
        ERR_clear_error()
        defer { ERR_clear_error() }
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else {
            throw CertificateProviderError(
                .malformedInput,
                "\(keyName): the service returned a public key that is not a DER SubjectPublicKeyInfo "
                    + "(\(der.count) bytes)"
            )
        }
        let handle = EVPKeyHandle(takingOwnershipOf: key)
        return EVPKeyHandle.publicKeyDER(of: handle.pointer)
    }

    /// `AB:CD:…`, the SHA-256 of `der` in upper-case hex pairs (as `openssl x509 -fingerprint`).
    private static func fingerprint(_ der: [UInt8]) -> String {
        DigestAlgorithm.sha256.hash(der).map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }
}
