import Foundation

// The documents `--json` prints. Field names are the `CodingKeys` of these types, and the table in
// docs/JSON.md lists exactly these names (a test compares them); rename nothing without changing
// docs/JSON.md in the same commit. Dates are ISO 8601 UTC strings; absent values are left out.

/// `{"providers": [{"id", "description"}]}`.
struct ProvidersDocument: Encodable {
    struct Provider: Encodable {
        var id: String
        var description: String
        enum CodingKeys: String, CodingKey, CaseIterable { case id, description }
    }
    var providers: [Provider]
    enum CodingKeys: String, CodingKey, CaseIterable { case providers }
}

/// `providers --params ID`: `{"provider", "parameters": [{"key", "type", "secret", "default", "description"}]}`.
struct ProviderParametersDocument: Encodable {
    struct Parameter: Encodable {
        var key: String
        var type: String
        var secret: Bool
        var `default`: String
        var description: String
        enum CodingKeys: String, CodingKey, CaseIterable { case key, type, secret, `default`, description }
    }
    var provider: String
    var parameters: [Parameter]
    enum CodingKeys: String, CodingKey, CaseIterable { case provider, parameters }
}
