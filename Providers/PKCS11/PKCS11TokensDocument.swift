import CertificateProviders
import Foundation

/// `tokens --json`: `{"tokens": [TOKEN]}`. Field names are the `CodingKeys`, and the table in
/// docs/JSON.md lists exactly these names (a test compares them).
package struct TokensDocument: Encodable, Sendable {
    package struct Key: Encodable, Sendable {
        var label: String
        var id: String
        var subject: String
        var notValidAfter: String
        var keyAlgorithm: String
        var privateKeyVisible: Bool
        var alwaysAuthenticate: Bool
        var uri: String
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case label, id, subject, notValidAfter, keyAlgorithm, privateKeyVisible, alwaysAuthenticate, uri
        }
    }
    package struct Token: Encodable, Sendable {
        var slot: UInt
        var slotDescription: String
        var label: String
        var manufacturer: String
        var model: String
        var serialNumber: String
        var flags: [String]
        var loggedIn: Bool
        var privateKeysHidden: Bool
        var uri: String
        var keys: [Key]
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case slot, slotDescription, label, manufacturer, model, serialNumber, flags, loggedIn, privateKeysHidden
            case uri, keys
        }
    }
    var tokens: [Token]
    package enum CodingKeys: String, CodingKey, CaseIterable { case tokens }
}

extension TokensDocument {
    /// The `--json` document of a token listing.
    init(_ inventory: PKCS11TokenInventory) {
        tokens = inventory.tokens.map { token in
            Token(
                slot: token.slotID,
                slotDescription: token.slotDescription,
                label: token.label,
                manufacturer: token.manufacturer,
                model: token.model,
                serialNumber: token.serialNumber,
                flags: token.flags,
                loggedIn: token.loggedIn,
                privateKeysHidden: token.privateKeysHidden,
                uri: token.uri,
                keys: token.keys.map { key in
                    Key(
                        label: key.label,
                        id: PKCS11CertificateProvider.hex(key.id),
                        subject: key.certificate.subject,
                        notValidAfter: key.certificate.notValidAfter.formatted(Date.ISO8601FormatStyle()),
                        keyAlgorithm: key.certificate.publicKeyAlgorithm.rawValue,
                        privateKeyVisible: key.privateKeyVisible,
                        alwaysAuthenticate: key.alwaysAuthenticate,
                        uri: key.uri
                    )
                }
            )
        }
    }
}
