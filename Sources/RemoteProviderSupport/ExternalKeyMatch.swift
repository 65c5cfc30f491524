public import CertificateProviders

/// The check every key-management provider makes before its first signature: the certificate the
/// user gave must certify the service's key, or every signature would name the wrong signer.
public enum ExternalKeyMatch {
    /// Throws unless `certificate`'s public key is the key whose SubjectPublicKeyInfo the service
    /// reported (compared after OpenSSL re-encodes both).
    /// - Parameters:
    ///   - certificate: the signer certificate the user gave.
    ///   - keySubjectPublicKeyInfo: the service key's DER SubjectPublicKeyInfo.
    ///   - keyName: the key as the user knows it (`Vault transit key 'docs' version 2`).
    /// - Throws: `.keyCertificateMismatch` naming both SHA-256 fingerprints of the public keys;
    ///   `.malformedInput` when the service's key cannot be read.
    public static func requireMatch(
        certificate: Certificate,
        keySubjectPublicKeyInfo: [UInt8],
        keyName: String
    ) throws {
        let key = try ExternalPublicKey(derEncoded: keySubjectPublicKeyInfo, what: keyName)
        let certified = try ExternalPublicKey(
            derEncoded: certificate.publicKeyDERRepresentation,
            what: "the certificate"
        )
        guard key.derRepresentation != certified.derRepresentation else { return }
        throw CertificateProviderError(
            .keyCertificateMismatch,
            "the certificate '\(certificate.subject)' does not certify \(keyName): its public key has SHA-256 "
                + "\(certified.sha256FingerprintHex), the key's is \(key.sha256FingerprintHex); give the certificate "
                + "issued for this key (parameter 'certificate')"
        )
    }
}
