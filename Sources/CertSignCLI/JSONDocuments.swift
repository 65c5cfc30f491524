import CertificateProviders
import Foundation
import PDFSigning
import PKCS12Provider
import Signing

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

/// IDENTITY: one stored identity's metadata (`identity list`, `show`, `import`).
struct IdentityDocument: Encodable {
    var alias: String
    var subject: String
    var issuer: String
    var serialNumber: String
    var notValidBefore: String
    var notValidAfter: String
    var sha256Fingerprint: String
    var keyAlgorithm: String
    var keySize: Int
    var chainLength: Int
    var importedAt: String
    /// Only after `identity import`.
    var chain: [String]?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case alias, subject, issuer, serialNumber, notValidBefore, notValidAfter, sha256Fingerprint, keyAlgorithm
        case keySize, chainLength, importedAt, chain
    }

    init(_ metadata: PKCS12IdentityStore.Metadata, chain: [Certificate]?) {
        alias = metadata.alias
        subject = metadata.subject
        issuer = metadata.issuer
        serialNumber = metadata.serialNumber
        notValidBefore = Format.isoDate(metadata.notValidBefore)
        notValidAfter = Format.isoDate(metadata.notValidAfter)
        sha256Fingerprint = metadata.sha256Fingerprint
        keyAlgorithm = metadata.keyAlgorithm
        keySize = metadata.keySize
        chainLength = metadata.chainLength
        importedAt = Format.isoDate(metadata.createdAt)
        self.chain = chain?.map(\.subject)
    }
}

/// `{"imported": IDENTITY}`, `{"identities": [IDENTITY]}`, `{"identity": IDENTITY}`,
/// `{"deleted": alias}`, `{"exported": {"alias", "file"}}`.
struct IdentityCommandDocument: Encodable {
    struct Exported: Encodable {
        var alias: String
        var file: String
        enum CodingKeys: String, CodingKey, CaseIterable { case alias, file }
    }
    var imported: IdentityDocument?
    var identities: [IdentityDocument]?
    var identity: IdentityDocument?
    var deleted: String?
    var exported: Exported?
    enum CodingKeys: String, CodingKey, CaseIterable { case imported, identities, identity, deleted, exported }
}

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

/// One file of `timestamp`.
struct TimestampResultDocument: Encodable {
    var signature: String
    var status: String
    var signers: Int?
    var timestamps: [AddedTimestampDocument]?
    var journalRowsUpdated: Int?
    var error: String?
    var code: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case signature, status, signers, timestamps, journalRowsUpdated, error, code
    }
}

/// `{"timestamped": N, "failed": N, "results": [...]}`.
struct TimestampDocument: Encodable {
    var timestamped: Int
    var failed: Int
    var results: [TimestampResultDocument]
    enum CodingKeys: String, CodingKey, CaseIterable { case timestamped, failed, results }
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

/// The signer's certificate in `verify`.
struct SignerCertificateDocument: Encodable {
    var subject: String
    var issuer: String
    var serialNumber: String
    var sha256Fingerprint: String
    var keyAlgorithm: String
    enum CodingKeys: String, CodingKey, CaseIterable {
        case subject, issuer, serialNumber, sha256Fingerprint, keyAlgorithm
    }
}

/// A signer's timestamp in `verify`.
struct SignerTimestampDocument: Encodable {
    var time: String
    var valid: Bool
    var tsa: String?
    var failure: FailureDocument?
    enum CodingKeys: String, CodingKey, CaseIterable { case time, valid, tsa, failure }
}

/// A signer's revocation status in `verify`: the summary, then each certificate of the signer's
/// and the TSA's paths (trust anchors excepted).
struct RevocationDocument: Encodable {
    var status: String
    var source: String
    var revocationTime: String?
    var certificates: [CertificateRevocationDocument]?
    enum CodingKeys: String, CodingKey, CaseIterable { case status, source, revocationTime, certificates }

    init(_ revocation: RevocationStatus) {
        status = revocation.state.rawValue
        source = revocation.source
        revocationTime = revocation.revocationTime.map(Format.isoDate)
        certificates =
            revocation.certificates.isEmpty ? nil : revocation.certificates.map(CertificateRevocationDocument.init)
    }
}

/// One certificate's revocation status in `verify`.
struct CertificateRevocationDocument: Encodable {
    var subject: String
    var sha256Fingerprint: String
    var role: String
    var status: String
    var source: String
    var revocationTime: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case subject, sha256Fingerprint, role, status, source, revocationTime
    }

    init(_ entry: CertificateRevocationStatus) {
        subject = entry.certificate.subject
        sha256Fingerprint = entry.certificate.sha256FingerprintHex
        role = entry.role.rawValue
        status = entry.status.state.rawValue
        source = entry.status.source
        revocationTime = entry.status.revocationTime.map(Format.isoDate)
    }
}

/// SIGNER in `verify`.
struct SignerDocument: Encodable {
    var valid: Bool
    var chainChecked: Bool
    var format: String
    var chain: [String]
    var signer: SignerCertificateDocument?
    var signingTime: String?
    var digest: String?
    var signatureAlgorithm: String?
    var checkedAt: String?
    var timestamp: SignerTimestampDocument?
    var revocation: RevocationDocument?
    var failure: FailureDocument?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case valid, chainChecked, format, chain, signer, signingTime, digest, signatureAlgorithm, checkedAt
        case timestamp, revocation, failure
    }

    init(_ signer: SignerVerification) {
        valid = signer.isValid
        chainChecked = signer.chainChecked
        format = signer.format.rawValue
        chain = signer.chain.map(\.subject)
        if let certificate = signer.signerCertificate {
            self.signer = SignerCertificateDocument(
                subject: certificate.subject,
                issuer: certificate.issuer,
                serialNumber: certificate.serialNumber,
                sha256Fingerprint: certificate.sha256FingerprintHex,
                keyAlgorithm: certificate.publicKeyAlgorithm.rawValue
            )
        }
        signingTime = signer.signingTime.map(Format.isoDate)
        digest = signer.digestAlgorithm?.rawValue ?? signer.digestAlgorithmName
        signatureAlgorithm = signer.signatureAlgorithmName
        checkedAt = signer.checkedAt.map(Format.isoDate)
        if let stamp = signer.timestamp {
            timestamp = SignerTimestampDocument(
                time: Format.isoDate(stamp.time),
                valid: stamp.isValid,
                tsa: stamp.tsa?.subject,
                failure: stamp.failure.map(FailureDocument.init)
            )
        }
        revocation = signer.revocation.map(RevocationDocument.init)
        failure = signer.failure.map(FailureDocument.init)
    }
}

/// `verify` of a CMS signature: the verdict, the first signer's fields at the top level (as before
/// several signers were reported), and `signers` with each one.
struct VerificationDocument: Encodable, Sendable {
    var valid: Bool
    var chainChecked: Bool
    var detached: Bool
    var validationTime: String
    var signature: String?
    var content: String?
    var signer: SignerCertificateDocument?
    var signingTime: String?
    var digest: String?
    var signatureAlgorithm: String?
    var format: String?
    var chain: [String]?
    var checkedAt: String?
    var timestamp: SignerTimestampDocument?
    var revocation: RevocationDocument?
    var failure: FailureDocument?
    var signers: [SignerDocument]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case valid, chainChecked, detached, validationTime, signature, content, signer, signingTime, digest
        case signatureAlgorithm, format, chain, checkedAt, timestamp, revocation, failure, signers
    }

    init(_ result: VerificationResult) {
        valid = result.isValid
        chainChecked = result.chainChecked
        detached = result.isDetached
        validationTime = Format.isoDate(result.validationTime)
        signers = result.signers.map(SignerDocument.init)
        if let first = signers.first {
            signer = first.signer
            signingTime = first.signingTime
            digest = first.digest
            signatureAlgorithm = first.signatureAlgorithm
            format = first.format
            chain = first.chain
            checkedAt = first.checkedAt
            timestamp = first.timestamp
            revocation = first.revocation
            failure = first.failure
        } else {
            chain = result.chain.map(\.subject)
        }
        if let overall = result.format { format = overall.rawValue }
        if let overall = result.failure { failure = FailureDocument(overall) }
    }
}

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
    var signatureFile: String??

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, location, provider, summary, createdAt, document, documentSize, documentDigest, digest, format
        case detached, signer, signerFingerprint, signatureFile
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
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(location, forKey: .location)
        try container.encode(provider, forKey: .provider)
        try container.encode(summary, forKey: .summary)
        try container.encodeIfPresent(createdAt, forKey: .createdAt)
        try container.encodeIfPresent(document, forKey: .document)
        try container.encodeIfPresent(documentSize, forKey: .documentSize)
        try container.encodeIfPresent(documentDigest, forKey: .documentDigest)
        try container.encodeIfPresent(digest, forKey: .digest)
        try container.encodeIfPresent(format, forKey: .format)
        try container.encodeIfPresent(detached, forKey: .detached)
        try container.encodeIfPresent(signer, forKey: .signer)
        try container.encodeIfPresent(signerFingerprint, forKey: .signerFingerprint)
        if let signatureFile {
            try container.encode(signatureFile, forKey: .signatureFile)
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

/// `{"url", "faults", "tls"}` of `emulator`.
struct EmulatorDocument: Encodable {
    var url: String
    var faults: Bool
    var tls: Bool
    enum CodingKeys: String, CodingKey, CaseIterable { case url, faults, tls }
}

/// `{"version"}` of `--version`.
struct VersionDocument: Encodable {
    var version: String
    enum CodingKeys: String, CodingKey, CaseIterable { case version }
}

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
    enum CodingKeys: String, CodingKey, CaseIterable {
        case field, kind, documentTimestamp, revision, coversWholeFile, laterChanges, laterRevisionsSigned
        case laterChangesDetail, changes, changesAllowed, docMDP, provenTime, byteRangeProblem, subFilter
        case claimedTime, reason, location
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

/// `verify FILE.pdf`: `{"document", "valid", "revisions", "unreferencedBytes", "signatures": [...]}`.
struct PDFVerificationDocument: Encodable, Sendable {
    var document: String
    var valid: Bool
    var revisions: Int
    var unreferencedBytes: Int64
    var signatures: [PDFSignatureDocument]
    enum CodingKeys: String, CodingKey, CaseIterable { case document, valid, revisions, unreferencedBytes, signatures }
}

/// `tokens`: `{"tokens": [TOKEN]}`.
struct TokensDocument: Encodable {
    struct Key: Encodable {
        var label: String
        var id: String
        var subject: String
        var notValidAfter: String
        var keyAlgorithm: String
        var privateKeyVisible: Bool
        var alwaysAuthenticate: Bool
        var uri: String
        enum CodingKeys: String, CodingKey, CaseIterable {
            case label, id, subject, notValidAfter, keyAlgorithm, privateKeyVisible, alwaysAuthenticate, uri
        }
    }
    struct Token: Encodable {
        var slot: UInt
        var slotDescription: String
        var label: String
        var manufacturer: String
        var model: String
        var serialNumber: String
        var flags: [String]
        var loggedIn: Bool
        var privateKeysHidden: Bool
        var uri: String
        var keys: [Key]
        enum CodingKeys: String, CodingKey, CaseIterable {
            case slot, slotDescription, label, manufacturer, model, serialNumber, flags, loggedIn, privateKeysHidden
            case uri, keys
        }
    }
    var tokens: [Token]
    enum CodingKeys: String, CodingKey, CaseIterable { case tokens }
}

/// `csc credentials`: `{"credentials": [CREDENTIAL]}`.
struct CredentialsDocument: Encodable {
    struct Credential: Encodable {
        var id: String
        var subject: String
        var issuer: String
        var key: String
        var keyLength: Int
        var keyStatus: String
        var algorithms: [String]
        var scal: Int
        var authMode: String
        var auth: [String]
        var multisign: Int
        enum CodingKeys: String, CodingKey, CaseIterable {
            case id, subject, issuer, key, keyLength, keyStatus, algorithms, scal, authMode, auth, multisign
        }
    }
    var credentials: [Credential]
    enum CodingKeys: String, CodingKey, CaseIterable { case credentials }
}
