public import CertificateProviders
internal import OpenSSLWrappers
import RemoteProviderSupport

/// What `GetPublicKey` says about an AWS KMS key, its public key read by OpenSSL.
///
/// The key's algorithm and size come from the SubjectPublicKeyInfo itself, not from `KeySpec`:
/// some KMS stand-ins (moto) return only the older `CustomerMasterKeySpec`.
public struct AWSKMSKeyDescription: Sendable {
    /// The key's ARN (`KeyId` of the answer), or the ID asked for when the service named none.
    public let keyID: String
    /// `SIGN_VERIFY` for a signing key (`ENCRYPT_DECRYPT`, `GENERATE_VERIFY_MAC`, … otherwise).
    public let keyUsage: String
    /// `KeySpec` or `CustomerMasterKeySpec` (`ECC_NIST_P256`, `RSA_2048`, …), as the service named it.
    public let keySpec: String
    /// The signing algorithms the service offers for the key (`ECDSA_SHA_256`, …); may be empty.
    public let signingAlgorithms: [String]
    /// The DER SubjectPublicKeyInfo, as OpenSSL encodes it.
    public let publicKeyDERRepresentation: [UInt8]
    /// The key's algorithm (RSA, or EC with its curve), from the SubjectPublicKeyInfo.
    public let publicKeyAlgorithm: PublicKeyAlgorithm
    /// The key size in bits (RSA modulus, EC field).
    public let keySize: Int
    /// The public key as OpenSSL holds it, for checking signatures.
    private let handle: EVPKeyHandle

    /// Reads a key's public half.
    /// - Throws: `.malformedInput` when `subjectPublicKeyInfo` is not a key OpenSSL reads.
    package init(
        keyID: String,
        keyUsage: String,
        keySpec: String,
        signingAlgorithms: [String],
        subjectPublicKeyInfo: [UInt8]
    ) throws {
        self.keyID = keyID
        self.keyUsage = keyUsage
        self.keySpec = keySpec
        self.signingAlgorithms = signingAlgorithms
        let key = try ExternalPublicKey(
            derEncoded: subjectPublicKeyInfo,
            what: "AWS KMS key \(keyID): the public key GetPublicKey returned"
        )
        handle = key.handle
        publicKeyDERRepresentation = key.derRepresentation
        publicKeyAlgorithm = key.algorithm
        keySize = key.keySize
    }

    /// Whether `signature` is this key's signature of `digest` (RSA PKCS#1 v1.5 over its DigestInfo,
    /// RSA-PSS with a salt as long as the digest, ECDSA as a DER `ECDSA-Sig-Value`): the check made
    /// on every signature KMS returns when no certificate is given. Never throws.
    public func isValidSignature(
        _ signature: [UInt8],
        forDigest digest: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    ) -> Bool {
        Certificate.isValidSignature(
            signature,
            forDigest: digest,
            digestAlgorithm: digestAlgorithm,
            scheme: scheme,
            publicKey: handle,
            algorithm: publicKeyAlgorithm
        )
    }
}

/// How a `Sign` request carries what is signed (the provider's `messageType` parameter).
public enum AWSKMSMessageType: String, Sendable, CaseIterable {
    /// `RAW` when the message (the DER signed attributes of a CMS signature, a few hundred bytes)
    /// fits KMS's 4096-byte limit, else `DIGEST`: the default. RAW lets KMS hash the message itself,
    /// which every KMS and stand-in does the same way, while some stand-ins (moto) hash a DIGEST
    /// once more and so sign the wrong value.
    case auto
    /// Always `MessageType=DIGEST`: the digest made here is sent (32-64 bytes per request).
    case digest
    /// Always `MessageType=RAW`: the message is sent and KMS hashes it; a message over 4096 bytes
    /// is refused.
    case raw

    /// The largest message KMS takes with `MessageType=RAW`.
    public static let rawMessageLimit = 4096
}

/// The names KMS gives its signing algorithms.
enum AWSKMSSigningAlgorithm {
    /// `ECDSA_SHA_256`, `RSASSA_PKCS1_V1_5_SHA_384`, `RSASSA_PSS_SHA_512`, … for a key, digest and scheme.
    /// - Throws: `.unsupportedAlgorithm` for a combination KMS does not sign.
    static func name(
        for algorithm: PublicKeyAlgorithm,
        digest: DigestAlgorithm,
        scheme: SignatureScheme
    ) throws -> String {
        let hash: String
        switch digest {
        case .sha256: hash = "SHA_256"
        case .sha384: hash = "SHA_384"
        case .sha512: hash = "SHA_512"
        default:
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "AWS KMS signs SHA-256, SHA-384 and SHA-512 digests, not \(digest)"
            )
        }
        if algorithm.isEC, scheme == .ecdsa { return "ECDSA_" + hash }
        if algorithm.isRSA, scheme == .rsaPKCS1v15 { return "RSASSA_PKCS1_V1_5_" + hash }
        if algorithm.isRSA, scheme == .rsaPSS { return "RSASSA_PSS_" + hash }
        throw CertificateProviderError(
            .unsupportedAlgorithm,
            "AWS KMS cannot sign with a \(algorithm) key and the \(scheme) scheme"
        )
    }
}
