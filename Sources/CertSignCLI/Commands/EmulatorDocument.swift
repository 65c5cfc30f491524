import Foundation

// The documents `--json` prints. Field names are the `CodingKeys` of these types, and the table in
// docs/JSON.md lists exactly these names (a test compares them); rename nothing without changing
// docs/JSON.md in the same commit. Dates are ISO 8601 UTC strings; absent values are left out.

/// `{"url", "faults", "tls"}` of `emulator`.
struct EmulatorDocument: Encodable {
    var url: String
    var faults: Bool
    var tls: Bool
    enum CodingKeys: String, CodingKey, CaseIterable { case url, faults, tls }
}
