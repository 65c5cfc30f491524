public import CertificateProviders
public import Foundation
public import Signing

extension PDFSignatureVerifier {
    /// Verifies every signature of the PDF at `url` as ``verify(pdfAt:trustAnchors:policy:)`` does
    /// and, when the policy asks for ``ValidationPolicy/checkRevocation``, asks the network for the
    /// revocation status of every certificate of each signature's paths (the signer's and its
    /// signature timestamp's TSA's, trust anchors excepted): OCSP from the certificate's
    /// authorityInfoAccess, else its CRL distribution points, through `fetcher`, as
    /// ``CMSVerifier/verify(signature:content:trustAnchors:policy:fetcher:revocation:)`` does for
    /// a CMS signature. Without `checkRevocation` nothing is fetched.
    ///
    /// - Parameters:
    ///   - url: the PDF.
    ///   - trustAnchors: the certificates to trust; empty: chains are not checked (and say so).
    ///   - policy: the validation policy.
    ///   - fetcher: how OCSP responders and CRL distribution points are reached.
    /// - Returns: the report; a PDF without signatures gives an empty, invalid report.
    /// - Throws: as ``verify(pdfAt:trustAnchors:policy:)``.
    public static func verify(
        pdfAt url: URL,
        trustAnchors: [Certificate],
        policy: ValidationPolicy,
        fetcher: any BinaryHTTPFetching
    ) async throws -> PDFVerificationReport {
        var offline = policy
        offline.checkRevocation = false
        let report = try verify(pdfAt: url, trustAnchors: trustAnchors, policy: offline)
        guard policy.checkRevocation else { return report }
        let file = try PDFFile(path: url.path)
        var policy = policy
        policy.documentValidationData = PDFDocumentSecurityStore.validationData(
            in: try QPDFDocument(path: url.path)
        )
        var signatures: [PDFSignatureReport] = []
        for signature in report.signatures {
            let range = signature.byteRange
            // A sound ByteRange (checked by the first pass) leaves out exactly the hex /Contents.
            guard signature.kind == .signature, signature.byteRangeProblem == nil, range.count == 4,
                let contents = PDFBytes.unhex(
                    try file.read(at: range[1], count: Int(range[2] - range[1])).dropFirst().dropLast()
                )
            else {
                signatures.append(signature)
                continue
            }
            let covered = try file.read(at: 0, count: Int(range[1])) + file.read(at: range[2], count: Int(range[3]))
            let verification = try await CMSVerifier.verify(
                signature: contents,
                content: .bytes(covered, name: signature.field),
                trustAnchors: trustAnchors,
                policy: policy,
                fetcher: fetcher
            )
            signatures.append(signature.replacing(verification: verification))
        }
        return PDFVerificationReport(
            signatures: signatures,
            revisionCount: report.revisionCount,
            unreferencedTrailingBytes: report.unreferencedTrailingBytes
        )
    }
}

extension PDFSignatureReport {
    /// The same report with another verification of its CMS.
    func replacing(verification: VerificationResult) -> PDFSignatureReport {
        replacing(verification: verification, documentTimestamp: documentTimestamp)
    }

    /// The same report with another verification of its CMS or token.
    func replacing(verification: VerificationResult, documentTimestamp: VerifiedTimestamp?) -> PDFSignatureReport {
        PDFSignatureReport(
            field: field,
            kind: kind,
            subFilter: subFilter,
            byteRange: byteRange,
            revision: revision,
            coversWholeFile: coversWholeFile,
            laterChanges: laterChanges,
            laterChangesDetail: laterChangesDetail,
            changes: changes,
            docMDPPermission: docMDPPermission,
            laterRevisionsSigned: laterRevisionsSigned,
            documentTimestamp: documentTimestamp,
            claimedTime: claimedTime,
            reason: reason,
            location: location,
            byteRangeProblem: byteRangeProblem,
            verification: verification,
            level: level,
            pastValidationTime: pastValidationTime
        )
    }
}
