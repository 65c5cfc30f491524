import CertificateProviders
import Foundation
import Signing

/// What the signatures of a PDF are as long-term signatures: each one's CMS (or document
/// timestamp token) and signature timestamps, and its PAdES baseline level (EN 319 142-1): B-T
/// with a signature timestamp or a later document timestamp, B-LT when the file's `/DSS` holds
/// revocation answers too, B-LTA when a document timestamp covers a revision with that DSS.
struct PDFLongTermFacts {
    /// One signature value of the file.
    struct Signature {
        let field: String
        let isDocumentTimestamp: Bool
        /// `/Contents`, zero padding included (the `/VRI` key is its SHA-1).
        let contents: [UInt8]
        /// The CMS (a document timestamp's token) without the padding.
        let cms: [UInt8]
        /// The signature's signature timestamp tokens (none for a document timestamp).
        let timestampTokens: [[UInt8]]
        /// Where its signed range ends.
        let coveredEnd: Int64
    }

    let signatures: [Signature]
    /// The certificates of the file's DSS.
    let documentCertificates: [Certificate]
    /// Each CMS signature's level, by field name.
    let levels: [String: SignatureLevel]

    /// The lowest level among the CMS signatures.
    var level: SignatureLevel {
        levels.values.min { $0.rank < $1.rank } ?? .bB
    }

    /// Whether a CMS signature lacks a signature timestamp and a later document timestamp.
    var needsDocumentTimestamp: Bool { levels.values.contains(.bB) }

    /// Reads the signatures of the PDF at `url`.
    /// - Throws: `.invalidParameter` when it has no CMS signature; `.malformedInput` for a
    ///   signature value that is not CMS; as ``QPDFDocument/init(path:)``.
    init(pdfAt url: URL) throws {
        try self.init(document: try QPDFDocument(path: url.path), url: url)
    }

    /// Reads the signatures of `document`, already open, which is the PDF at `url` (verify opens it once).
    init(document: QPDFDocument, url: URL) throws {
        let fields = PDFFields(document: document).all.filter(\.isSignature)
        var signatures: [Signature] = []
        for found in PDFSignatureVerifier.signatures(fields, in: document) where found.byteRange.count == 4 {
            let isTimestamp = PDFDocumentTimestampCheck.isDocumentTimestamp(
                type: found.type,
                subFilter: found.subFilter
            )
            let cms = try PaddedCMS.trimmed(found.contents)
            signatures.append(
                Signature(
                    field: found.field,
                    isDocumentTimestamp: isTimestamp,
                    contents: found.contents,
                    cms: cms,
                    timestampTokens: isTimestamp ? [] : try LongTermLevelUpgrade.timestampTokens(in: cms),
                    coveredEnd: found.byteRange[2] + found.byteRange[3]
                )
            )
        }
        guard signatures.contains(where: { !$0.isDocumentTimestamp }) else {
            throw CertificateProviderError(
                .invalidParameter,
                "'\(url.path)' has no signature to extend: sign it first (certsign sign --format pades)"
            )
        }
        self.signatures = signatures
        documentCertificates = PDFDocumentSecurityStore.validationData(in: document).certificates
        levels = try Self.levels(of: signatures, document: document, url: url)
    }

    private static func levels(
        of signatures: [Signature],
        document: QPDFDocument,
        url: URL
    ) throws -> [String: SignatureLevel] {
        let hasRevocationData =
            document.key(document.root, "/DSS").map { dss in
                ["/OCSPs", "/CRLs"].contains { !(document.key(dss, $0).map(document.items) ?? []).isEmpty }
            } ?? false
        let timestamps = signatures.filter(\.isDocumentTimestamp)
        // The document timestamps whose covered revision already holds a DSS: archive timestamps.
        var archiveEnds: [Int64] = []
        if hasRevocationData, !timestamps.isEmpty {
            let mapped = try PDFMappedFile(path: url.path)
            for timestamp in timestamps {
                let revision = try? QPDFDocument(
                    mapped: mapped,
                    length: Int(timestamp.coveredEnd),
                    description: url.path,
                    strict: false
                )
                if let revision, revision.key(revision.root, "/DSS") != nil { archiveEnds.append(timestamp.coveredEnd) }
            }
        }
        var levels: [String: SignatureLevel] = [:]
        for signature in signatures where !signature.isDocumentTimestamp {
            let proven =
                !signature.timestampTokens.isEmpty || timestamps.contains { $0.coveredEnd > signature.coveredEnd }
            var level = SignatureLevel.bB
            if proven { level = hasRevocationData ? .bLT : .bT }
            if level == .bLT, archiveEnds.contains(where: { $0 > signature.coveredEnd }) { level = .bLTA }
            levels[signature.field] = level
        }
        return levels
    }
}
