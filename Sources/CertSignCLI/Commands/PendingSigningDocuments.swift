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

/// `{"completed": N, "failed": N, "results": [...]}`.
struct CompleteDocument: Encodable {
    var completed: Int
    var failed: Int
    var results: [CompletedDocument]
    enum CodingKeys: String, CodingKey, CaseIterable { case completed, failed, results }
}
