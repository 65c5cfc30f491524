import Foundation
import JSON

/// A transit key as `GET /v1/<mount>/keys/<name>` describes it: its type, whether it signs, and the
/// public key of each version (asymmetric keys only).
public struct VaultTransitKeyInfo: Sendable, Equatable {
    /// The key's name.
    public let name: String
    /// The key type (`ecdsa-p256`, `rsa-2048`, `aes256-gcm96`, …).
    public let type: String
    /// Whether the key can sign (`supports_signing`).
    public let supportsSigning: Bool
    /// The newest version.
    public let latestVersion: Int
    /// The PEM public key of each version that has one.
    public let publicKeys: [Int: String]

    /// Creates a description; see the properties.
    public init(name: String, type: String, supportsSigning: Bool, latestVersion: Int, publicKeys: [Int: String]) {
        self.name = name
        self.type = type
        self.supportsSigning = supportsSigning
        self.latestVersion = latestVersion
        self.publicKeys = publicKeys
    }

    /// Decodes the `data` object of a `keys/<name>` answer.
    /// - Throws: `.network` naming the field when the answer is not the protocol.
    package init(data reader: JSONObjectReader) throws {
        name = try reader.string("name")
        type = try reader.string("type")
        supportsSigning = (try? reader.bool("supports_signing")) ?? false
        latestVersion = try reader.int("latest_version")
        var publicKeys: [Int: String] = [:]
        if case .object(let versions)? = reader.value("keys") {
            for (version, value) in versions {
                // Symmetric keys list a creation time per version, asymmetric ones an object.
                guard let number = Int(version), let pem = value["public_key"]?.stringValue, !pem.isEmpty else {
                    continue
                }
                publicKeys[number] = pem
            }
        }
        self.publicKeys = publicKeys
    }
}
