internal import COpenSSL
public import CertificateProviders
internal import Foundation
package import OpenSSLWrappers

/// The public half of a key held by a key-management service (a Vault / OpenBao transit key, a
/// KMS key), read from the SubjectPublicKeyInfo the service reports and re-encoded by OpenSSL, so
/// that it compares byte for byte with a certificate's `publicKeyDERRepresentation`.
public struct ExternalPublicKey: Sendable {
    /// The DER SubjectPublicKeyInfo as OpenSSL encodes it.
    public let derRepresentation: [UInt8]
    /// The key as OpenSSL holds it, for checking signatures.
    package let handle: EVPKeyHandle
    /// The key's algorithm (RSA, EC with its curve).
    public let algorithm: PublicKeyAlgorithm
    /// The key size in bits.
    public let keySize: Int

    /// Reads a DER SubjectPublicKeyInfo.
    /// - Parameter what: names the key in the error (`Vault transit key 'docs' version 2`).
    /// - Throws: `.malformedInput` when OpenSSL cannot read it.
    public init(derEncoded bytes: [UInt8], what: String) throws {
        OpenSSLErrorQueue.clear()
        var cursor = UnsafePointer<UInt8>?.none
        let key: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else {
            throw OpenSSLErrorQueue.error(.malformedInput, "\(what): the public key is not a SubjectPublicKeyInfo")
        }
        handle = EVPKeyHandle(takingOwnershipOf: key)
        derRepresentation = handle.publicKeyDER
        algorithm = handle.algorithm
        keySize = Int(EVP_PKEY_get_bits(handle.pointer))
    }

    /// Reads a PEM `PUBLIC KEY` block.
    /// - Throws: `.malformedInput` when the text holds no readable public key.
    public init(pemEncoded pem: String, what: String) throws {
        let body = pem.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("-----") }.joined()
        guard pem.contains("-----BEGIN PUBLIC KEY-----"), let der = Data(base64Encoded: body), !der.isEmpty else {
            throw CertificateProviderError.malformedInput("\(what): the public key is not a PEM 'PUBLIC KEY' block")
        }
        try self.init(derEncoded: Array(der), what: what)
    }

    /// The SHA-256 of ``derRepresentation`` as colon-separated hex (as `openssl pkey -pubin -outform
    /// DER | sha256sum` prints it, grouped).
    public var sha256FingerprintHex: String {
        HexText.uppercase(DigestAlgorithm.sha256.hash(derRepresentation), separator: UInt8(ascii: ":"))
    }
}
