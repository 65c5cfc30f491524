import CertificateProviders
import Foundation
import Signing

/// Past signature validation (ETSI EN 319 102-1 §5.6.2.4, as pyHanko's `ades_past`) for PAdES
/// B-LTA: a signature that does not verify at the validation time (its certificate expired, its
/// TSA's too) is VALID when the chain of document timestamps after it proves it existed, with its
/// validation data, at a time it did verify. The last document timestamp must verify at the
/// validation time; each earlier one at the time the next one proves (its TSA's certificate was
/// valid when it was timestamped again); the signature then verifies at the time the first one
/// proves, from the DSS.
enum PDFPastValidation {
    /// One signature value of the file with what re-verifying it needs.
    struct Value {
        let report: PDFSignatureReport
        let contents: [UInt8]
        let covered: [UInt8]
        var coveredEnd: Int64 { report.byteRange.count == 4 ? report.byteRange[2] + report.byteRange[3] : 0 }
    }

    /// The reports with past validation applied: a B-LTA signature that failed and is proven by
    /// its document timestamp chain gets the verification at the first timestamp's time and
    /// ``PDFSignatureReport/pastValidationTime``; the timestamps of that chain their verification
    /// at the time the next one proves.
    static func apply(
        to values: [Value],
        trustAnchors: [Certificate],
        policy: ValidationPolicy
    ) -> [PDFSignatureReport] {
        var reports = values.map(\.report)
        for (index, value) in values.enumerated() {
            let report = value.report
            guard report.kind == .signature, report.level == .bLTA, !report.verification.isValid,
                report.byteRangeProblem == nil
            else { continue }
            let chain = values.indices.filter {
                values[$0].report.kind == .documentTimestamp && values[$0].coveredEnd > value.coveredEnd
            }.sorted { values[$0].coveredEnd < values[$1].coveredEnd }
            guard let proven = prove(chain, values: values, trustAnchors: trustAnchors, policy: policy) else {
                continue
            }
            var past = policy
            past.validationTime = proven.time
            let verification = CMSVerifier.verify(
                signature: value.contents,
                content: value.covered,
                trustAnchors: trustAnchors,
                policy: past
            )
            guard verification.isValid else { continue }
            var updated = report.replacing(verification: verification)
            updated.pastValidationTime = proven.time
            reports[index] = updated
            for (position, verified) in proven.timestamps { reports[position] = verified }
        }
        return reports
    }

    /// The time the chain proves (its first timestamp's), with each timestamp's report verified at
    /// the time the next one proves; nil when a link does not hold.
    private static func prove(
        _ chain: [Int],
        values: [Value],
        trustAnchors: [Certificate],
        policy: ValidationPolicy
    ) -> (time: Date, timestamps: [(Int, PDFSignatureReport)])? {
        guard let last = chain.last, values[last].report.verification.isValid,
            var time = values[last].report.documentTimestamp?.time
        else { return nil }
        var verified: [(Int, PDFSignatureReport)] = []
        for position in chain.dropLast().reversed() {
            var atNext = policy
            atNext.validationTime = time
            let (verification, timestamp) = PDFDocumentTimestampCheck.verify(
                contents: values[position].contents,
                covered: values[position].covered,
                trustAnchors: trustAnchors,
                policy: atNext
            )
            guard verification.isValid, let timestamp, timestamp.isValid else { return nil }
            verified.append(
                (position, values[position].report.replacing(verification: verification, documentTimestamp: timestamp))
            )
            time = timestamp.time
        }
        return (time, verified)
    }
}
