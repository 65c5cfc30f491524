import CertificateProviders
import Foundation

// The documents `certsign --json identity …` prints. Field names are the `CodingKeys` of these types,
// and the table in docs/JSON.md lists exactly these names (a test compares them); rename nothing
// without changing docs/JSON.md in the same commit. Dates are ISO 8601 UTC strings; absent values are
// left out.

/// IDENTITY: one stored identity's metadata (`identity list`, `show`, `import`).
package struct IdentityDocument: Encodable, Sendable {
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

    package enum CodingKeys: String, CodingKey, CaseIterable {
        case alias, subject, issuer, serialNumber, notValidBefore, notValidAfter, sha256Fingerprint, keyAlgorithm
        case keySize, chainLength, importedAt, chain
    }

    init(_ metadata: PKCS12IdentityStore.Metadata, chain: [Certificate]?) {
        func isoDate(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle()) }
        alias = metadata.alias
        subject = metadata.subject
        issuer = metadata.issuer
        serialNumber = metadata.serialNumber
        notValidBefore = isoDate(metadata.notValidBefore)
        notValidAfter = isoDate(metadata.notValidAfter)
        sha256Fingerprint = metadata.sha256Fingerprint
        keyAlgorithm = metadata.keyAlgorithm
        keySize = metadata.keySize
        chainLength = metadata.chainLength
        importedAt = isoDate(metadata.createdAt)
        self.chain = chain?.map(\.subject)
    }
}

/// `{"imported": IDENTITY}`, `{"identities": [IDENTITY]}`, `{"identity": IDENTITY}`,
/// `{"deleted": alias}`, `{"exported": {"alias", "file"}}`.
package struct IdentityCommandDocument: Encodable, Sendable {
    package struct Exported: Encodable, Sendable {
        var alias: String
        var file: String
        package enum CodingKeys: String, CodingKey, CaseIterable { case alias, file }
    }
    var imported: IdentityDocument?
    var identities: [IdentityDocument]?
    var identity: IdentityDocument?
    var deleted: String?
    var exported: Exported?
    package enum CodingKeys: String, CodingKey, CaseIterable {
        case imported, identities, identity, deleted, exported
    }
}
