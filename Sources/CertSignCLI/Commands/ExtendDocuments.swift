import Foundation

// The documents `extend --json` prints (docs/JSON.md lists these names; a test compares them).

/// One file of `extend`.
struct ExtendResultDocument: Encodable {
    var signature: String
    var status: String
    var level: String?
    var format: String?
    var timestamps: [AddedTimestampDocument]?
    var journalRowsUpdated: Int?
    var error: String?
    var code: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case signature, status, level, format, timestamps, journalRowsUpdated, error, code
    }
}

/// `{"extended": N, "failed": N, "revocationRequests": N, "results": [...]}`.
struct ExtendDocument: Encodable {
    var extended: Int
    var failed: Int
    var revocationRequests: Int
    var results: [ExtendResultDocument]
    enum CodingKeys: String, CodingKey, CaseIterable { case extended, failed, revocationRequests, results }
}
