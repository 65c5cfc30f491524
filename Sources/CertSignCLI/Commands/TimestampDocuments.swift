import Foundation
import Signing

// The documents `--json` prints. Field names are the `CodingKeys` of these types, and the table in
// docs/JSON.md lists exactly these names (a test compares them); rename nothing without changing
// docs/JSON.md in the same commit. Dates are ISO 8601 UTC strings; absent values are left out.

/// One file of `timestamp`.
struct TimestampResultDocument: Encodable {
    var signature: String
    var status: String
    var signers: Int?
    var timestamps: [AddedTimestampDocument]?
    var journalRowsUpdated: Int?
    /// The PDF field that holds a document timestamp.
    var field: String?
    var error: String?
    var code: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case signature, status, signers, timestamps, journalRowsUpdated, field, error, code
    }
}

/// `{"timestamped": N, "failed": N, "results": [...]}`.
struct TimestampDocument: Encodable {
    var timestamped: Int
    var failed: Int
    var results: [TimestampResultDocument]
    enum CodingKeys: String, CodingKey, CaseIterable { case timestamped, failed, results }
}
