public import CertificateProviders
import Foundation
public import Testing

/// A signer outside the package for two-phase signing tests: `openssl pkeyutl -sign` over a
/// prepared digest, with the key kind, scheme and options of each kind the package signs with.
public struct OpenSSLExternalSigner: CustomTestStringConvertible, Sendable {
    /// The kind's name (`RSA PKCS#1 v1.5`, `RSA-PSS`, `ECDSA P-256`, `GOST R 34.10-2012 256`).
    public let name: String
    /// The key to make for it.
    public let key: LocalSigningKey.GenerationParameters
    /// The scheme to prepare with (nil: the key's).
    public let scheme: SignatureScheme?
    /// `openssl pkeyutl`'s options for it.
    public let pkeyutl: [String]
    /// The name, for test listings.
    public var testDescription: String { name }
    /// Whether it needs the gost engine (and a Streebog digest).
    public var isGOST: Bool { name.hasPrefix("GOST") }
    /// The digest a signature of this kind is prepared with.
    public var digestAlgorithm: DigestAlgorithm { isGOST ? .streebog256 : .sha256 }

    /// RSA PKCS#1 v1.5, RSA-PSS (salt = digest length), ECDSA P-256 and GOST R 34.10-2012 256.
    public static let all: [OpenSSLExternalSigner] = [
        OpenSSLExternalSigner(
            name: "RSA PKCS#1 v1.5",
            key: .rsa2048,
            scheme: nil,
            pkeyutl: ["-pkeyopt", "digest:sha256"]
        ),
        OpenSSLExternalSigner(
            name: "RSA-PSS",
            key: .rsa2048,
            scheme: .rsaPSS,
            pkeyutl: [
                "-pkeyopt", "rsa_padding_mode:pss", "-pkeyopt", "rsa_pss_saltlen:digest", "-pkeyopt",
                "digest:sha256",
            ]
        ),
        OpenSSLExternalSigner(name: "ECDSA P-256", key: .p256, scheme: nil, pkeyutl: []),
        OpenSSLExternalSigner(name: "GOST R 34.10-2012 256", key: .gost256, scheme: nil, pkeyutl: ["-engine", "gost"]),
    ]

    /// The `openssl pkeyutl -sign` command line that signs the digest in `input` with the PEM key in
    /// `key` into `output`.
    public func arguments(key: String, input: String, output: String) -> [String] {
        ["pkeyutl", "-sign", "-inkey", key, "-in", input, "-out", output] + pkeyutl
    }

    /// `openssl pkeyutl -sign` of `digest` with `key` (written as an unencrypted PEM in `directory`).
    /// - Returns: the signature value.
    public func sign(_ digest: [UInt8], key: LocalSigningKey, in directory: TemporaryDirectory) throws -> [UInt8] {
        let name = UUID().uuidString
        let keyPath = try directory.write("\(name)-key.pem", text: try key.pemRepresentation(password: nil))
        let digestPath = try directory.write("\(name)-digest.bin", digest)
        let valuePath = directory.path("\(name)-value.bin")
        let result = try ExternalTool.run("openssl", arguments(key: keyPath, input: digestPath, output: valuePath))
        try #require(result.succeeded, "openssl pkeyutl (\(name)): \(result.errorOutput)")
        return try directory.read("\(name)-value.bin")
    }
}
