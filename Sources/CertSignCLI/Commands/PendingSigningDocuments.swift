import CertificateProviders
import Foundation
import Signing

// The documents `prepare`, `complete` and `pending` print with --json (docs/JSON.md lists these
// names; a test compares them).

/// One document of `prepare`: its pending file and what the key must sign.
struct PreparedDocument: Encodable {
    var document: String
    var status: String
    var pendingFile: String?
    var id: String?
    var format: String?
    var digestAlgorithm: String?
    var scheme: String?
    var digestToSignHex: String?
    var digestToSignBase64: String?
    var dataToSignHex: String?
    var dataToSignBase64: String?
    var error: String?
    var code: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case document, status, pendingFile, id, format, digestAlgorithm, scheme, digestToSignHex
        case digestToSignBase64, dataToSignHex, dataToSignBase64, error, code
    }

    init(_ path: String, pendingFile: String, _ file: PendingFile) {
        let pending = file.pending
        document = Format.path(path)
        status = "prepared"
        self.pendingFile = Format.path(pendingFile)
        id = pending.id
        format = pending.format.rawValue
        digestAlgorithm = pending.digestAlgorithm.rawValue
        scheme = pending.scheme.rawValue
        digestToSignHex = Format.hex(pending.digestToSign)
        digestToSignBase64 = Data(pending.digestToSign).base64EncodedString()
        dataToSignHex = Format.hex(pending.dataToSign)
        dataToSignBase64 = Data(pending.dataToSign).base64EncodedString()
    }

    init(failed path: String, _ error: CertificateProviderError) {
        document = Format.path(path)
        status = "failed"
        self.error = error.reason
        code = error.code.rawValue
    }

    /// The lines `prepare` prints for it without --json.
    var humanText: String {
        """
        prepared \(Format.printable(document)) -> \(Format.printable(pendingFile ?? "")) (id \(id ?? ""), \
        \(format ?? ""), \(digestAlgorithm ?? "") with \(scheme ?? ""))
          digest to sign (hex):    \(digestToSignHex ?? "")
          digest to sign (base64): \(digestToSignBase64 ?? "")
          data to sign (hex):      \(dataToSignHex ?? "")
          data to sign (base64):   \(dataToSignBase64 ?? "")
        """
    }
}

/// `{"prepared": N, "failed": N, "results": [...]}`.
struct PrepareDocument: Encodable {
    var prepared: Int
    var failed: Int
    var results: [PreparedDocument]
    enum CodingKeys: String, CodingKey, CaseIterable { case prepared, failed, results }
}

/// One pending file of `complete`: what was written and recorded.
struct CompletedDocument: Encodable {
    var pendingFile: String
    var status: String
    var document: String?
    var signature: String?
    var id: String?
    var format: String?
    var level: String?
    var error: String?
    var code: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case pendingFile, status, document, signature, id, format, level, error, code
    }
}

extension CompletedDocument {
    /// The row of a pending file at `path` that `result` completed (`complete`, `pending resume`).
    init(completed path: String, _ file: PendingFile, _ result: Commands.CompletedSignature) {
        self.init(
            pendingFile: Format.path(path),
            status: "completed",
            document: Format.path(file.completion.document),
            signature: Format.path(result.output),
            id: result.record,
            format: result.format,
            level: file.level.description
        )
    }
}

/// `{"completed": N, "failed": N, "results": [...]}`.
struct CompleteDocument: Encodable {
    var completed: Int
    var failed: Int
    var results: [CompletedDocument]
    enum CodingKeys: String, CodingKey, CaseIterable { case completed, failed, results }
}

/// One pending signature of `pending list` and `pending show`.
struct PendingEntryDocument: Encodable {
    var id: String
    var file: String
    var document: String
    var format: String
    var level: String
    var tsa: String?
    var digestAlgorithm: String
    var scheme: String
    var created: String
    var signer: String
    var field: String?
    var digestToSignHex: String
    var digestToSignBase64: String
    var dataToSignBase64: String
    /// `sign --no-wait`: the provider's operation that waits for an approval.
    var operationID: String?
    var provider: String?
    /// `declined` or `expired`, once `pending resume` heard so.
    var outcome: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, file, document, format, level, tsa, digestAlgorithm, scheme, created, signer, field
        case digestToSignHex, digestToSignBase64, dataToSignBase64, operationID, provider, outcome
    }

    init(_ path: String, _ file: PendingFile) {
        let pending = file.pending
        id = pending.id
        self.file = Format.path(path)
        document = Format.path(file.completion.document)
        format = pending.format.rawValue
        level = file.level.description
        tsa = file.completion.tsa
        digestAlgorithm = pending.digestAlgorithm.rawValue
        scheme = pending.scheme.rawValue
        created = Format.isoDate(pending.created)
        signer = pending.certificate.subject
        field = pending.pdf?.fieldName
        digestToSignHex = Format.hex(pending.digestToSign)
        digestToSignBase64 = Data(pending.digestToSign).base64EncodedString()
        dataToSignBase64 = Data(pending.dataToSign).base64EncodedString()
        operationID = file.completion.remote?.operationID
        provider = file.completion.remote?.providerID.rawValue
        outcome = file.completion.outcome
    }

    /// What `pending show` prints without --json.
    var humanText: String {
        let rows: [(String, String)] = [
            ("id", id), ("file", file), ("document", document),
            ("format", format + (field.map { ", field \($0)" } ?? "")),
            ("level", level + (tsa.map { ", TSA \($0)" } ?? "")), ("signer", signer),
            ("algorithm", "\(digestAlgorithm) with \(scheme)"), ("created", created),
            ("digest to sign (hex)", digestToSignHex), ("digest to sign (base64)", digestToSignBase64),
            ("data to sign (base64)", dataToSignBase64),
        ]
        let waiting =
            operationID.map { id in
                [
                    (
                        outcome == nil ? "waits for approval" : "approval \(outcome ?? "")",
                        "operation \(id) (\(provider ?? ""))"
                    )
                ]
            } ?? []
        return (rows + waiting).map { "\($0.0): \(Format.printable($0.1))" }.joined(separator: "\n")
    }
}

/// `{"pending": [...], "unreadable": [{"file", "error"}]}`.
struct PendingListDocument: Encodable {
    struct Unreadable: Encodable {
        var file: String
        var error: String
        enum CodingKeys: String, CodingKey, CaseIterable { case file, error }
    }
    var pending: [PendingEntryDocument]
    var unreadable: [Unreadable]
    enum CodingKeys: String, CodingKey, CaseIterable { case pending, unreadable }
}

/// `{"cancelled": ID, "file": PATH}`.
struct PendingCancelDocument: Encodable {
    var cancelled: String
    var file: String
    enum CodingKeys: String, CodingKey, CaseIterable { case cancelled, file }
}
