import CertificateProviders
import Foundation
import PDFSigning
import Signing

// The documents `--json` prints. Field names are the `CodingKeys` of these types, and the table in
// docs/JSON.md lists exactly these names (a test compares them); rename nothing without changing
// docs/JSON.md in the same commit. Dates are ISO 8601 UTC strings; absent values are left out.

/// Where a PDF signature sits in its file and what changed after it (`verify FILE.pdf`).
struct PDFPlacementDocument: Encodable {
    var field: String
    /// `signature` or `documentTimestamp`.
    var kind: String
    /// A document timestamp's time (ISO 8601), when its token could be read.
    var documentTimestamp: String?
    var revision: Int
    var coversWholeFile: Bool
    var laterChanges: String
    var laterRevisionsSigned: Bool
    var laterChangesDetail: String?
    var changes: [PDFChangeDocument]
    var changesAllowed: Bool
    var docMDP: Int?
    var provenTime: String?
    var byteRangeProblem: String?
    var subFilter: String?
    var claimedTime: String?
    var reason: String?
    var location: String?
    /// A CMS signature's PAdES level: `PAdES-B-B`, `PAdES-B-T`, `PAdES-B-LT`, `PAdES-B-LTA`.
    var level: String?
    /// Past signature validation: the time the document timestamp chain proves, at which it verified.
    var pastValidationTime: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case field, kind, documentTimestamp, revision, coversWholeFile, laterChanges, laterRevisionsSigned
        case laterChangesDetail, changes, changesAllowed, docMDP, provenTime, byteRangeProblem, subFilter
        case claimedTime, reason, location, level, pastValidationTime
    }

    init(_ signature: PDFSignatureReport) {
        field = signature.field
        kind = signature.kind.rawValue
        documentTimestamp = signature.documentTimestamp.map { Format.isoDate($0.time) }
        revision = signature.revision
        coversWholeFile = signature.coversWholeFile
        laterChanges = signature.laterChanges.rawValue
        laterRevisionsSigned = signature.laterRevisionsSigned
        laterChangesDetail = signature.laterChangesDetail
        changes = signature.changes.map(PDFChangeDocument.init)
        changesAllowed = signature.changesAllowed
        docMDP = signature.docMDPPermission
        provenTime = signature.provenTime.map(Format.isoDate)
        byteRangeProblem = signature.byteRangeProblem
        subFilter = signature.subFilter
        claimedTime = signature.claimedTime.map(Format.isoDate)
        reason = signature.reason
        location = signature.location
        level = signature.level.map { "PAdES-\($0)" }
        pastValidationTime = signature.pastValidationTime.map(Format.isoDate)
    }
}

/// One change after a PDF signature: `{"kind", "revision", "objects", "text", "allowed"}`.
struct PDFChangeDocument: Encodable {
    var kind: String
    var revision: Int
    var objects: [Int]
    var text: String
    var allowed: Bool
    enum CodingKeys: String, CodingKey, CaseIterable { case kind, revision, objects, text, allowed }

    init(_ change: PDFChange) {
        kind = change.kind.rawValue
        revision = change.revision
        objects = change.objects
        text = change.text
        allowed = change.isAllowed
    }
}

/// One signature of a PDF: the fields of a CMS verification plus `pdf`.
struct PDFSignatureDocument: Encodable {
    var verification: VerificationDocument
    var pdf: PDFPlacementDocument
    enum CodingKeys: String, CodingKey, CaseIterable { case pdf }

    func encode(to encoder: any Encoder) throws {
        try verification.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(pdf, forKey: .pdf)
    }
}

/// `verify FILE.pdf`: `{"document", "valid", "indication", "subIndication", "revisions",
/// "unreferencedBytes", "signatures": [...]}`; the indication is the worst of the signatures'.
struct PDFVerificationDocument: Encodable, Sendable {
    var document: String
    var valid: Bool
    var indication: String
    var subIndication: String?
    var revisions: Int
    var unreferencedBytes: Int64
    var signatures: [PDFSignatureDocument]
    enum CodingKeys: String, CodingKey, CaseIterable {
        case document, valid, indication, subIndication, revisions, unreferencedBytes, signatures
    }
}
