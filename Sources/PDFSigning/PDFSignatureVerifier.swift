public import CertificateProviders
public import Foundation
public import Signing

/// What the revisions after a signed one change.
public struct PDFLaterChanges: Sendable, Hashable, CustomStringConvertible {
    /// The raw value: `none`, `signatures`, `formFields` or `other`.
    public let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// The signature covers the whole file.
    public static let none = PDFLaterChanges("none")
    /// Later revisions only add signatures (signature fields, their values and appearances,
    /// validation data): countersignatures.
    public static let signatures = PDFLaterChanges("signatures")
    /// Later revisions add signatures and fill form fields (values and appearances), nothing else.
    public static let formFields = PDFLaterChanges("formFields")
    /// Later revisions change something else (page content, resources, the catalog, new fields):
    /// the signed revision is still intact, but what the file shows now may differ from what
    /// was signed.
    public static let other = PDFLaterChanges("other")

    /// The raw value.
    public var description: String { rawValue }
}

/// One signature of a PDF and what verifying it found.
public struct PDFSignatureReport: Sendable {
    /// The signature field's full name.
    public let field: String
    /// A CMS signature or a document timestamp.
    public let kind: PDFSignatureKind
    /// `/SubFilter` (`ETSI.CAdES.detached`, `adbe.pkcs7.detached`), when present.
    public let subFilter: String?
    /// The signed byte ranges, `[0, a, b, c]`.
    public let byteRange: [Int64]
    /// The revision the signature covers (1 is the original document; counted by `%%EOF`
    /// markers, so a linearized file's first revision counts as two).
    public let revision: Int
    /// Whether the signature covers the whole file.
    public let coversWholeFile: Bool
    /// What the revisions after this signature change.
    public let laterChanges: PDFLaterChanges
    /// For ``PDFLaterChanges/other``: the first such change in words (`page object 4 0 changed
    /// (/Contents)`).
    public let laterChangesDetail: String?
    /// Whether a later signature covers the file's last revision (true also when this one does):
    /// false means someone changed the PDF after every signature and the changes are not signed.
    public let laterRevisionsSigned: Bool
    /// For a ``PDFSignatureKind/documentTimestamp``: the token checked (its time, TSA and, when it
    /// is not valid, why); nil for a signature, or when the token cannot be read.
    public let documentTimestamp: VerifiedTimestamp?
    /// `/M`, the signer's *claimed* signing time.
    public let claimedTime: Date?
    /// The time a valid signature timestamp (PAdES B-T) proves the signature existed at, or a valid
    /// document timestamp proves its revision existed at; nil without one, or when it does not
    /// verify (see the verification's signer timestamp, or ``documentTimestamp``).
    public var provenTime: Date? {
        guard let timestamp = documentTimestamp ?? verification.signers.first?.timestamp, timestamp.isValid else {
            return nil
        }
        return timestamp.time
    }
    /// `/Reason`, when present.
    public let reason: String?
    /// `/Location`, when present.
    public let location: String?
    /// Why the ByteRange cannot be trusted (it does not start at 0, its gap is not exactly
    /// `/Contents`, or the covered range does not end at a `%%EOF`); nil when it is sound.
    public let byteRangeProblem: String?
    /// The CMS signature's verification under the policy; for a document timestamp, the token's
    /// check (the TSA in the signer's place, no SignerInfos).
    public let verification: VerificationResult

    /// Whether the ByteRange is sound and the CMS verified.
    public var isValid: Bool { byteRangeProblem == nil && verification.isValid }
}

/// Every signature of a PDF.
public struct PDFVerificationReport: Sendable {
    /// The signatures, in the order of their fields.
    public let signatures: [PDFSignatureReport]
    /// The number of revisions (`%%EOF` markers) in the file.
    public let revisionCount: Int
    /// Whether the file's last revision is covered by no signature.
    public var hasUnsignedChanges: Bool { signatures.contains { !$0.laterRevisionsSigned } }
    /// Whether the file has signatures and every one is valid.
    public var isValid: Bool { !signatures.isEmpty && signatures.allSatisfy(\.isValid) }
}

/// Lists and verifies the signatures of a PDF: for each signature field, the ByteRange's sanity,
/// the revision it covers and whether the file changed since, and the CMS verified by
/// ``CMSVerifier`` under a ``ValidationPolicy`` over exactly the signed bytes.
///
/// The signed bytes of each signature are read into memory for the CMS check (signing, by
/// contrast, streams them); what later revisions change is analysed object by object (see
/// ``PDFLaterChanges``), and whether a later signature covers them. A document timestamp
/// (`/Type /DocTimeStamp`) is checked as an RFC 3161 token over its ByteRange instead (see
/// ``PDFSignatureKind/documentTimestamp``).
public enum PDFSignatureVerifier {
    /// Verifies every signature of the PDF at `url`.
    ///
    /// - Parameters:
    ///   - url: the PDF.
    ///   - trustAnchors: the certificates to trust; empty: chains are not checked (and say so).
    ///   - policy: the validation policy (default strict, offline).
    /// - Returns: the report; a PDF without signatures gives an empty, invalid report.
    /// - Throws: `.unsupportedOperation` for an encrypted PDF; `.malformedInput` when qpdf cannot
    ///   read it; `.fileSystem`.
    public static func verify(
        pdfAt url: URL,
        trustAnchors: [Certificate],
        policy: ValidationPolicy = ValidationPolicy()
    ) throws -> PDFVerificationReport {
        let document = try QPDFDocument(path: url.path)
        let file = try PDFFile(path: url.path)
        let ends = try file.endOfFileMarkers()
        let fields = PDFFields(document: document).all.filter(\.isSignature)

        struct Found {
            let field: String
            let type: String?
            let subFilter: String?
            let byteRange: [Int64]
            let contents: [UInt8]
            let claimedTime: Date?
            let reason: String?
            let location: String?
        }
        var found: [Found] = []
        for field in fields {
            guard let value = document.key(field.handle, "/V"), document.isDictionary(value) else { continue }
            let range = (document.key(value, "/ByteRange").map(document.items) ?? []).compactMap(document.integer)
            found.append(
                Found(
                    field: field.name,
                    type: document.key(value, "/Type").map(document.unparse).map { String($0.dropFirst()) },
                    subFilter: document.key(value, "/SubFilter").map(document.unparse).map { String($0.dropFirst()) },
                    byteRange: range,
                    contents: document.key(value, "/Contents").flatMap(document.bytes) ?? [],
                    claimedTime: document.key(value, "/M").flatMap(document.text).flatMap(PDFBytes.parseDate),
                    reason: document.key(value, "/Reason").flatMap(document.text),
                    location: document.key(value, "/Location").flatMap(document.text)
                )
            )
        }
        let lastEnd = ends.last ?? file.size
        let coveredEnds = found.map { $0.byteRange.count == 4 ? $0.byteRange[2] + $0.byteRange[3] : 0 }
        let furthest = coveredEnds.max() ?? 0

        var reports: [PDFSignatureReport] = []
        for (index, signature) in found.enumerated() {
            let coveredEnd = coveredEnds[index]
            let problem = try byteRangeProblem(
                signature.byteRange,
                contents: signature.contents,
                file: file,
                ends: ends
            )
            let covered = try coveredBytes(signature.byteRange, file: file)
            // The whole /Contents: the CMS layer reads DER or BER and allows the zero padding after it.
            let (kind, verification, documentTimestamp) = PDFDocumentTimestampCheck.verifyValue(
                type: signature.type,
                subFilter: signature.subFilter,
                contents: signature.contents,
                covered: covered,
                trustAnchors: trustAnchors,
                policy: policy
            )
            let revision = ends.filter { $0 <= coveredEnd }.count
            let wholeFile = try isOnlyWhitespace(file, from: coveredEnd, to: file.size)
            var later = PDFLaterChanges.none
            var detail: String?
            if !wholeFile {
                if problem == nil, coveredEnd > 0, coveredEnd < file.size {
                    let signedBytes = try file.read(at: 0, count: Int(coveredEnd))
                    let tail = try file.read(at: coveredEnd, count: Int(file.size - coveredEnd))
                    let analysis = try? PDFChangeAnalysis.analyse(
                        signedBytes: signedBytes,
                        tail: tail,
                        document: document
                    )
                    later = analysis?.kind ?? .other
                    detail =
                        analysis == nil ? "the signed revision cannot be read to compare it" : analysis?.detail
                } else {
                    later = .other
                    detail = "the signed revision is unknown (the ByteRange is not sound)"
                }
            }
            reports.append(
                PDFSignatureReport(
                    field: signature.field,
                    kind: kind,
                    subFilter: signature.subFilter,
                    byteRange: signature.byteRange,
                    revision: revision,
                    coversWholeFile: wholeFile,
                    laterChanges: later,
                    laterChangesDetail: detail,
                    laterRevisionsSigned: wholeFile || furthest >= lastEnd,
                    documentTimestamp: documentTimestamp,
                    claimedTime: signature.claimedTime,
                    reason: signature.reason,
                    location: signature.location,
                    byteRangeProblem: problem,
                    verification: verification
                )
            )
        }
        return PDFVerificationReport(signatures: reports, revisionCount: ends.count)
    }

    /// Checks ByteRange `[0, a, b, c]`: starts at 0; `a..<b` is exactly the hex string `/Contents`
    /// holds; `b + c` lies in the file, right after a `%%EOF` (and its end of line).
    static func byteRangeProblem(
        _ range: [Int64],
        contents: [UInt8],
        file: borrowing PDFFile,
        ends: [Int64]
    ) throws -> String? {
        guard range.count == 4 else { return "the ByteRange does not have four numbers" }
        guard range[0] == 0 else { return "the ByteRange does not start at the beginning of the file" }
        let (a, b, c) = (range[1], range[2], range[3])
        guard a > 0, b > a + 1, c >= 0, b + c <= file.size else {
            return "the ByteRange lies outside the file or overlaps itself"
        }
        guard b - a <= 4 << 20 else { return "the gap in the ByteRange is larger than any signature" }
        let gap = try file.read(at: a, count: Int(b - a))
        guard gap.first == 0x3C, gap.last == 0x3E, let decoded = PDFBytes.unhex(gap.dropFirst().dropLast()),
            decoded == contents
        else {
            return "the unsigned gap in the ByteRange is not exactly the signature's /Contents"
        }
        let coveredEnd = b + c
        guard let end = ends.last(where: { $0 <= coveredEnd }), try isOnlyWhitespace(file, from: end, to: coveredEnd)
        else {
            return "the signed range does not end at a %%EOF marker"
        }
        return nil
    }

    private static func coveredBytes(_ range: [Int64], file: borrowing PDFFile) throws -> [UInt8] {
        guard range.count == 4, range[0] == 0, range[1] >= 0, range[2] >= range[1], range[3] >= 0 else { return [] }
        return try file.read(at: 0, count: Int(range[1])) + file.read(at: range[2], count: Int(range[3]))
    }

    private static func isOnlyWhitespace(_ file: borrowing PDFFile, from start: Int64, to end: Int64) throws -> Bool {
        guard end >= start else { return false }
        guard end - start <= 4 else { return false }
        return try file.read(at: start, count: Int(end - start)).allSatisfy(PDFBytes.isWhitespace)
    }
}
