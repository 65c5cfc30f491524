import Foundation
import Signing

/// One file of `verify`: what verifying one SIGNATURE prints with `--json` (a CMS verification or a
/// PDF's report), or why the file could not be verified.
enum VerifiedFileDocument: Encodable, Sendable {
    case cms(VerificationDocument)
    case pdf(PDFVerificationDocument)
    case failed(VerifyFailedDocument)

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .cms(let document): try document.encode(to: encoder)
        case .pdf(let document): try document.encode(to: encoder)
        case .failed(let document): try document.encode(to: encoder)
        }
    }
}

/// A file `verify` could not read or parse as a signature's input: `{"signature", "valid": false,
/// "code", "error"}`.
struct VerifyFailedDocument: Encodable, Sendable {
    var signature: String
    var valid = false
    var code: String
    var error: String
    enum CodingKeys: String, CodingKey, CaseIterable { case signature, valid, code, error }

    init(signature: String, code: String, error: String) {
        self.signature = signature
        self.code = code
        self.error = error
    }
}

/// `verify` of several files: `{"valid": N, "invalid": N, "passed": N, "indeterminate": N, "failed": N,
/// "results": [...]}`, in the order given; `valid` counts the files that passed, `invalid` the others.
struct VerifyManyDocument: Encodable {
    var valid: Int
    var invalid: Int
    var passed: Int
    var indeterminate: Int
    var failed: Int
    var results: [VerifiedFileDocument]
    enum CodingKeys: String, CodingKey, CaseIterable { case valid, invalid, passed, indeterminate, failed, results }

    /// The counts and documents of `files` (a file that cannot be read counts as failed).
    init(_ files: [(indication: Indication, document: VerifiedFileDocument)]) {
        passed = files.filter { $0.indication == .passed }.count
        indeterminate = files.filter { $0.indication == .indeterminate }.count
        failed = files.filter { $0.indication == .failed }.count
        valid = passed
        invalid = files.count - passed
        results = files.map(\.document)
    }
}
