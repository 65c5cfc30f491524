import CertificateProviders
import Foundation
import Signing

// The documents `--json` prints. Field names are the `CodingKeys` of these types, and the table in
// docs/JSON.md lists exactly these names (a test compares them); rename nothing without changing
// docs/JSON.md in the same commit. Dates are ISO 8601 UTC strings; absent values are left out.

/// `{"time", "tsa"}`: one timestamp added to a signature.
struct AddedTimestampDocument: Encodable {
    var time: String
    var tsa: String
    enum CodingKeys: String, CodingKey, CaseIterable { case time, tsa }
}

/// One document of `sign`: signed (`document`, `status`, `signature`, `id`, …) or failed
/// (`document`, `status`, `error`, `code`).
struct SignResultDocument: Encodable {
    var document: String
    var status: String
    var signature: String?
    var id: String?
    var signer: String?
    var format: String?
    var detached: Bool?
    var digest: String?
    var timestamps: [AddedTimestampDocument]?
    /// The PDF signature field (`--format pades`).
    var field: String?
    /// The PAdES level, `B-B` or `B-T` (`--format pades`).
    var level: String?
    /// True when the signature replaced an existing file (`--force`).
    var replaced: Bool?
    var error: String?
    var code: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case document, status, signature, id, signer, format, detached, digest, timestamps, field, level, replaced
        case error, code
    }

    static func failed(_ document: String, _ error: CertificateProviderError) -> SignResultDocument {
        SignResultDocument(document: document, status: "failed", error: error.reason, code: error.code.rawValue)
    }
}

/// `{"signed": N, "failed": N, "skipped": N, "results": [...]}` (`skipped`: `--skip-existing`).
struct SignDocument: Encodable {
    var signed: Int
    var failed: Int
    var skipped: Int
    var results: [SignResultDocument]
    enum CodingKeys: String, CodingKey, CaseIterable { case signed, failed, skipped, results }

    init(results: [SignResultDocument]) {
        self.results = results
        signed = results.filter { $0.status == "signed" }.count
        failed = results.filter { $0.status == "failed" }.count
        skipped = results.filter { $0.status == "skipped" }.count
    }
}

/// `{"code", "reason"}`: why a signature or timestamp failed.
struct FailureDocument: Encodable {
    var code: String
    var reason: String
    /// What to do (a detached signature without its document: `--content`).
    var hint: String?
    enum CodingKeys: String, CodingKey, CaseIterable { case code, reason, hint }
    init(_ failure: VerificationFailure) {
        code = failure.code.rawValue
        reason = failure.reason
    }
}
