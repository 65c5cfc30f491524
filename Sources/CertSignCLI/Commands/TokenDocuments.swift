import Foundation

// The documents `--json` prints. Field names are the `CodingKeys` of these types, and the table in
// docs/JSON.md lists exactly these names (a test compares them); rename nothing without changing
// docs/JSON.md in the same commit. Dates are ISO 8601 UTC strings; absent values are left out.

/// `tokens`: `{"tokens": [TOKEN]}`.
struct TokensDocument: Encodable {
    struct Key: Encodable {
        var label: String
        var id: String
        var subject: String
        var notValidAfter: String
        var keyAlgorithm: String
        var privateKeyVisible: Bool
        var alwaysAuthenticate: Bool
        var uri: String
        enum CodingKeys: String, CodingKey, CaseIterable {
            case label, id, subject, notValidAfter, keyAlgorithm, privateKeyVisible, alwaysAuthenticate, uri
        }
    }
    struct Token: Encodable {
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
        enum CodingKeys: String, CodingKey, CaseIterable {
            case slot, slotDescription, label, manufacturer, model, serialNumber, flags, loggedIn, privateKeysHidden
            case uri, keys
        }
    }
    var tokens: [Token]
    enum CodingKeys: String, CodingKey, CaseIterable { case tokens }
}
