import CertificateProviders
import Foundation
import SignatureJournal
import Signing

// The documents `--json` prints. Field names are the `CodingKeys` of these types, and the table in
// docs/JSON.md lists exactly these names (a test compares them); rename nothing without changing
// docs/JSON.md in the same commit. Dates are ISO 8601 UTC strings; absent values are left out.

/// One entry of `signatures list`.
struct SignatureEntryDocument: Encodable {
    var id: String
    var location: String
    var provider: String
    var summary: String
    var createdAt: String?
    var document: String?
    var documentSize: Int64?
    var documentDigest: String?
    var digest: String?
    var format: String?
    var detached: Bool?
    var signer: String?
    var signerFingerprint: String?
    /// The .p7s path; JSON null for a signature kept inline (standard output); absent for server entries.
    /// The synthesized encoding does both: it leaves out `nil` and writes `.some(nil)` as null.
    var signatureFile: String??
    /// The host and process ID of the worker that made a journal record (absent for rows older than the chain).
    var host: String?
    var processID: Int64?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, location, provider, summary, createdAt, document, documentSize, documentDigest, digest, format
        case detached, signer, signerFingerprint, signatureFile, host, processID
    }

    init(_ entry: SignatureEntry) {
        id = entry.id
        location = entry.location.description
        provider = entry.providerID.rawValue
        summary = entry.summary
        createdAt = entry.createdAt.map(Format.isoDate)
        if let record = entry.record {
            document = record.documentName
            documentSize = record.documentSize
            documentDigest = Format.hex(record.documentDigest)
            digest = record.digestAlgorithm.rawValue
            format = record.format.rawValue
            detached = record.isDetached
            signer = record.signerSubject
            signerFingerprint = record.signerFingerprint
            switch record.storage {
            case .file(let url): signatureFile = .some(url.path)
            case .inline: signatureFile = .some(nil)
            }
            if !record.workerHost.isEmpty {
                host = record.workerHost
                processID = record.workerProcessID
            }
        }
    }
}

/// `{"signatures": [...]}` and `{"removed": {"id", "location"}}`.
struct SignaturesDocument: Encodable {
    struct Removed: Encodable {
        var id: String
        var location: String
        enum CodingKeys: String, CodingKey, CaseIterable { case id, location }
    }
    var signatures: [SignatureEntryDocument]?
    var removed: Removed?
    enum CodingKeys: String, CodingKey, CaseIterable { case signatures, removed }
}
