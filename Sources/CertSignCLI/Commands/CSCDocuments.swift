import Foundation

// The documents `--json` prints. Field names are the `CodingKeys` of these types, and the table in
// docs/JSON.md lists exactly these names (a test compares them); rename nothing without changing
// docs/JSON.md in the same commit. Dates are ISO 8601 UTC strings; absent values are left out.

/// `csc credentials`: `{"credentials": [CREDENTIAL]}`.
struct CredentialsDocument: Encodable {
    struct Credential: Encodable {
        var id: String
        var subject: String
        var issuer: String
        var key: String
        var keyLength: Int
        var keyStatus: String
        var algorithms: [String]
        var scal: Int
        var authMode: String
        var auth: [String]
        var multisign: Int
        enum CodingKeys: String, CodingKey, CaseIterable {
            case id, subject, issuer, key, keyLength, keyStatus, algorithms, scal, authMode, auth, multisign
        }
    }
    var credentials: [Credential]
    enum CodingKeys: String, CodingKey, CaseIterable { case credentials }
}
