public import CertificateProviders
public import Foundation
public import Signing

/// What the revisions after a signed one change: the worst class among its changes (see
/// ``PDFChange``), in this order: `other`, `annotations`, `formFields`, `signatures`, `ltv`.
public struct PDFLaterChanges: Sendable, Hashable, CustomStringConvertible {
    /// The raw value: `none`, `ltv`, `signatures`, `formFields`, `annotations` or `other`.
    public let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// The signature covers the whole file.
    public static let none = PDFLaterChanges("none")
    /// Later revisions change at most validation data and metadata (`/DSS`, `/VRI`, document
    /// timestamps, XMP, `/Info`), or nothing the document's object graph holds.
    public static let ltv = PDFLaterChanges("ltv")
    /// Later revisions only add signatures (signature fields, their widgets and values) and
    /// validation data: countersignatures.
    public static let signatures = PDFLaterChanges("signatures")
    /// Later revisions add signatures and fill form fields (values and appearances), nothing else.
    public static let formFields = PDFLaterChanges("formFields")
    /// Later revisions add or change annotations (FreeText, Stamp, Square…) besides signatures and
    /// form fills: allowed only by a certification signature's DocMDP `/P 3`.
    public static let annotations = PDFLaterChanges("annotations")
    /// Later revisions change something else (page content, resources, the catalog, new fields, a
    /// re-pointed or freed object, a locked field):
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
    /// The revision the signature covers: 1 is the first section of the file's cross-reference
    /// chain (from the last `startxref` back through `/Prev`), each incremental update one more;
    /// a linearized file's first-page section counts as a revision of its own. When the signed
    /// range ends where no revision of the chain ends, the number of revisions before its end (and
    /// ``changes`` says so).
    public let revision: Int
    /// Whether the signature covers the whole file.
    public let coversWholeFile: Bool
    /// What the revisions after this signature change.
    public let laterChanges: PDFLaterChanges
    /// The first change the policy does not allow, in words (``PDFChange/description``); nil
    /// when every change is allowed.
    public let laterChangesDetail: String?
    /// Every change the revisions after this signature made, classified and judged by this
    /// signature's modification policy (at most 50 per revision, then a count).
    public let changes: [PDFChange]
    /// The DocMDP permission that governs the changes after this signature (a certification
    /// signature's `/P`: 1, 2 or 3); nil without a certification signature.
    public let docMDPPermission: Int?
    /// Whether the policy allows every later change: DocMDP as ``docMDPPermission`` says (without
    /// one: signatures, LTV updates and form filling), and no field this signature locks
    /// (FieldMDP) changed.
    public var changesAllowed: Bool { changes.allSatisfy(\.isAllowed) }
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
    public package(set) var verification: VerificationResult
    /// The PAdES baseline level of a CMS signature (ETSI EN 319 142-1): B-B; B-T with a signature
    /// timestamp or a later document timestamp; B-LT when the file's `/DSS` holds revocation
    /// answers too; B-LTA when a document timestamp covers a revision with that DSS. Nil for a
    /// document timestamp, or when the signature cannot be read.
    public var level: SignatureLevel? = nil
    /// Past signature validation (ETSI EN 319 102-1 §5.6.2.4): the time the chain of document
    /// timestamps after a B-LTA signature proves it existed at, and at which it verified (from the
    /// DSS) when it does not verify at the validation time any more; nil otherwise.
    public var pastValidationTime: Date? = nil

    /// Whether the ByteRange is sound and the CMS verified, ignoring what changed later.
    public var isIntactAndVerified: Bool { byteRangeProblem == nil && verification.isValid }
    /// Whether the ByteRange is sound, the CMS verified and the policy allows every later change.
    public var isValid: Bool { isIntactAndVerified && changesAllowed }
}

/// Every signature of a PDF.
public struct PDFVerificationReport: Sendable {
    /// The signatures, in the order of their fields.
    public let signatures: [PDFSignatureReport]
    /// The number of revisions in the file's cross-reference chain (see
    /// ``PDFSignatureReport/revision``).
    public let revisionCount: Int
    /// Bytes after the last revision that no cross-reference section describes (0 normally); more
    /// makes ``hasUnsignedChanges`` true and is a change of class `other` for every signature.
    public let unreferencedTrailingBytes: Int64
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
/// contrast, streams them). Revisions come from the cross-reference chain; what each revision
/// after a signature changed is found on the object graph (each revision opened by qpdf without
/// xref recovery and compared with the one before it from the trailer's `/Root`), classified
/// (``PDFChange``, ``PDFLaterChanges``) and judged by the signature's DocMDP / FieldMDP policy: a
/// change the policy does not allow makes the signature invalid. A document timestamp
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
        let found = signatures(PDFFields(document: document).all.filter(\.isSignature), in: document)
        let (policy, levels) = longTermContext(policy, document: document, url: url)
        let revisions = try PDFRevisions.read(file)
        let coveredEnds = found.map { $0.byteRange.count == 4 ? $0.byteRange[2] + $0.byteRange[3] : 0 }
        let signedRevisions = try coveredEnds.map { try revision(endingAt: $0, revisions, file: file) }
        let lastSigned = signedRevisions.compactMap { $0 }.max() ?? 0
        let allSigned = revisions.unreferencedBytes == 0 && lastSigned == revisions.ends.count
        // Each ByteRange is judged once; the analysis starts after the first sound signed revision.
        let problems = try found.map { try byteRangeProblem(of: $0, file: file, ends: ends) }
        let analysis = try analyse(signedRevisions, problems: problems, file: file, revisions: revisions)
        // The certification signature's DocMDP governs every revision after its own.
        let certification = found.indices.first { found[$0].policy.isCertification }
        var reports: [PDFSignatureReport] = []
        for (index, signature) in found.enumerated() {
            let coveredEnd = coveredEnds[index]
            let problem = problems[index]
            // The whole /Contents: the CMS layer reads DER or BER and allows the zero padding after it.
            let (kind, verification, documentTimestamp) = PDFDocumentTimestampCheck.verifyValue(
                type: signature.type,
                subFilter: signature.subFilter,
                contents: signature.contents,
                covered: try coveredBytes(signature.byteRange, file: file),
                trustAnchors: trustAnchors,
                policy: policy
            )
            let wholeFile = try isOnlyWhitespace(file, from: coveredEnd, to: file.size)
            var modification = signature.policy.rules
            if let certification {
                modification.certified(by: found[certification].policy.rules, signedRevisions[certification])
            }
            let changes =
                wholeFile
                ? []
                : laterChanges(
                    signedRevisions[index],
                    problem: problem,
                    analysis: analysis,
                    policy: modification,
                    revisions: revisions,
                    coveredEnd: coveredEnd
                )
            reports.append(
                PDFSignatureReport(
                    field: signature.field,
                    kind: kind,
                    subFilter: signature.subFilter,
                    byteRange: signature.byteRange,
                    revision: signedRevisions[index] ?? revisions.ends.filter { $0 <= coveredEnd }.count,
                    coversWholeFile: wholeFile,
                    laterChanges: wholeFile ? .none : PDFChangeAnalysis.worst(changes),
                    laterChangesDetail: changes.first { !$0.isAllowed }?.description,
                    changes: changes,
                    docMDPPermission: modification.permission,
                    laterRevisionsSigned: wholeFile || allSigned,
                    documentTimestamp: documentTimestamp,
                    claimedTime: signature.claimedTime,
                    reason: signature.reason,
                    location: signature.location,
                    byteRangeProblem: problem,
                    verification: verification,
                    level: kind == .signature ? levels[signature.field] : nil
                )
            )
        }
        return PDFVerificationReport(
            signatures: try pastValidated(reports, found, file: file, trustAnchors: trustAnchors, policy: policy),
            revisionCount: revisions.ends.count,
            unreferencedTrailingBytes: revisions.unreferencedBytes
        )
    }

    /// The reports with past signature validation applied to B-LTA signatures that fail now.
    private static func pastValidated(
        _ reports: [PDFSignatureReport],
        _ found: [Found],
        file: borrowing PDFFile,
        trustAnchors: [Certificate],
        policy: ValidationPolicy
    ) throws -> [PDFSignatureReport] {
        guard reports.contains(where: { $0.kind == .signature && $0.level == .bLTA && !$0.verification.isValid })
        else { return reports }
        var values: [PDFPastValidation.Value] = []
        for (report, signature) in zip(reports, found) {
            values.append(
                .init(
                    report: report,
                    contents: signature.contents,
                    covered: try coveredBytes(signature.byteRange, file: file)
                )
            )
        }
        return PDFPastValidation.apply(to: values, trustAnchors: trustAnchors, policy: policy)
    }

    /// B-LT: the DSS's certificates and answers used offline, as a CAdES-LT's own are; and the
    /// PAdES level of each CMS signature, by field.
    private static func longTermContext(
        _ policy: ValidationPolicy,
        document: QPDFDocument,
        url: URL
    ) -> (ValidationPolicy, [String: SignatureLevel]) {
        var policy = policy
        policy.documentValidationData = PDFDocumentSecurityStore.validationData(in: document)
        return (policy, (try? PDFLongTermFacts(document: document, url: url))?.levels ?? [:])
    }

    /// The signature fields that hold a signature value, with what verifying them needs.
    static func signatures(_ fields: [PDFFields.Field], in document: QPDFDocument) -> [Found] {
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
                    indirectByteRange: document.key(value, "/ByteRange").map(document.isIndirect) ?? false,
                    contents: document.key(value, "/Contents").flatMap(document.bytes) ?? [],
                    claimedTime: document.key(value, "/M").flatMap(document.text).flatMap(PDFBytes.parseDate),
                    reason: document.key(value, "/Reason").flatMap(document.text),
                    location: document.key(value, "/Location").flatMap(document.text),
                    policy: modificationPolicy(field: field.handle, value: value, in: document)
                )
            )
        }
        return found
    }

    struct Found {
        let field: String
        let type: String?
        let subFilter: String?
        let byteRange: [Int64]
        /// `/ByteRange` is a reference: a later revision can redefine what the signature claims to cover.
        let indirectByteRange: Bool
        let contents: [UInt8]
        let claimedTime: Date?
        let reason: String?
        let location: String?
        let policy: SignaturePolicy
    }

    /// What a signature allows after it, read from its field (`/Lock`) and value (`/Reference`).
    struct SignaturePolicy {
        var rules = PDFModificationPolicy()
        var isCertification = false
    }

    /// Reads DocMDP and FieldMDP from the signature value's `/Reference` transforms and the
    /// field's `/Lock`; a certification signature is the one the catalog's `/Perms /DocMDP` names.
    private static func modificationPolicy(
        field: UInt32,
        value: UInt32,
        in document: QPDFDocument
    )
        -> SignaturePolicy
    {
        var result = SignaturePolicy()
        if let perms = document.key(document.root, "/Perms"), let docMDP = document.key(perms, "/DocMDP"),
            document.isIndirect(docMDP), document.isIndirect(value),
            document.objectID(docMDP) == document.objectID(value)
        {
            result.isCertification = true
        }
        func permission(_ parameters: UInt32) -> Int? {
            document.key(parameters, "/P").flatMap(document.integer).map { Int(min(max($0, 1), 3)) }
        }
        func lock(_ parameters: UInt32) -> PDFModificationPolicy.FieldLock? {
            guard let action = document.key(parameters, "/Action").map(document.unparse) else { return nil }
            let names = (document.key(parameters, "/Fields").map(document.items) ?? []).compactMap(document.text)
            return PDFModificationPolicy.FieldLock(action: action, fields: Set(names))
        }
        for reference in document.key(value, "/Reference").map(document.items) ?? [] {
            let method = document.key(reference, "/TransformMethod").map(document.unparse)
            let parameters = document.key(reference, "/TransformParams")
            if method == "/DocMDP", result.isCertification {
                result.rules.permission = parameters.flatMap(permission) ?? 2
            } else if method == "/FieldMDP", let parameters {
                result.rules.lock = lock(parameters)
            }
        }
        if let lockDictionary = document.key(field, "/Lock") {
            result.rules.lock = result.rules.lock ?? lock(lockDictionary)
            if let own = permission(lockDictionary) {
                result.rules.permission = min(result.rules.permission ?? 3, own)
            }
        }
        return result
    }

    /// The revision of the chain a signed range ending at `end` covers: the one that ends there
    /// (up to the end of line after its `%%EOF`); nil when none does.
    private static func revision(
        endingAt end: Int64,
        _ revisions: PDFRevisions,
        file: borrowing PDFFile
    ) throws
        -> Int?
    {
        guard let index = revisions.ends.firstIndex(where: { $0 >= end }) else { return nil }
        return try isOnlyWhitespace(file, from: end, to: revisions.ends[index]) ? index + 1 : nil
    }

    /// Compares the revisions after the earliest soundly signed one (the file read once).
    private static func analyse(
        _ signedRevisions: [Int?],
        problems: [String?],
        file: borrowing PDFFile,
        revisions: PDFRevisions
    ) throws -> PDFChangeAnalysis? {
        var first: Int?
        for (index, signedRevision) in signedRevisions.enumerated() {
            guard let revision = signedRevision, revision < revisions.ends.count, problems[index] == nil
            else { continue }
            first = min(first ?? revision, revision)
        }
        guard let first else { return nil }
        return PDFChangeAnalysis(
            file: try PDFMappedFile(path: file.path),
            revisions: revisions,
            after: first,
            description: file.path
        )
    }

    /// The changes after a signature that does not cover the whole file, judged by `policy`.
    private static func laterChanges(
        _ signedRevision: Int?,
        problem: String?,
        analysis: PDFChangeAnalysis?,
        policy: PDFModificationPolicy,
        revisions: PDFRevisions,
        coveredEnd: Int64
    ) -> [PDFChange] {
        let next = revisions.ends.filter { $0 <= coveredEnd }.count + 1
        func other(_ text: String, revision: Int = next) -> PDFChange {
            PDFChange(kind: .other, revision: revision, objects: [], text: text, isAllowed: false)
        }
        var changes: [PDFChange] = []
        if let problem {
            changes.append(other("the signed revision is unknown: \(problem)"))
        } else if let signedRevision {
            changes += analysis?.changes(after: signedRevision, policy: policy) ?? []
        } else {
            changes.append(
                other("the signed range does not end where a revision of the cross-reference chain ends")
            )
        }
        if let chainProblem = revisions.problem {
            changes.append(other("the cross-reference chain cannot be followed: \(chainProblem)"))
        }
        if revisions.unreferencedBytes > 0 {
            changes.append(
                other(
                    "\(revisions.unreferencedBytes) bytes after the last revision that no cross-reference "
                        + "section describes",
                    revision: revisions.ends.count + 1
                )
            )
        }
        return changes
    }

    /// The problem of `signature`'s ByteRange (see ``byteRangeProblem(_:contents:file:ends:isIndirect:)``).
    private static func byteRangeProblem(of signature: Found, file: borrowing PDFFile, ends: [Int64]) throws -> String?
    {
        try byteRangeProblem(
            signature.byteRange,
            contents: signature.contents,
            file: file,
            ends: ends,
            isIndirect: signature.indirectByteRange
        )
    }

    /// Checks ByteRange `[0, a, b, c]`: a direct array; starts at 0; `a..<b` is exactly the hex
    /// string `/Contents` holds, with an even number of digits; `b + c` lies in the file, right
    /// after a `%%EOF` (and its end of line).
    static func byteRangeProblem(
        _ range: [Int64],
        contents: [UInt8],
        file: borrowing PDFFile,
        ends: [Int64],
        isIndirect: Bool = false
    ) throws -> String? {
        guard !isIndirect else {
            return "the ByteRange is a reference to another object, which a later revision can redefine: "
                + "what the signature covers is unclear"
        }
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
        guard gap.dropFirst().dropLast().filter({ !PDFBytes.isWhitespace($0) }).count.isMultiple(of: 2) else {
            return "the signature's /Contents has an odd number of hex digits: which bytes it holds is unclear"
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
