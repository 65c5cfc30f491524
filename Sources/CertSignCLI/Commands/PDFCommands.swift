import CertificateProviders
import Foundation
import PDFSigning
import Signing

/// `certsign sign DOC.pdf --format pades` and `certsign verify DOC.pdf`: PAdES inside the PDF.
extension Commands {
    /// Signs each PDF with `identity` as PAdES B-B. Output: `--out FILE`, `--in-place`, `--out-dir DIR`
    /// or `NAME-signed.pdf` beside the input.
    static func signPDF(
        _ path: String,
        identity: SigningIdentity,
        parsed: ParsedArguments,
        digest: DigestAlgorithm,
        context: CommandContext
    ) async throws -> SignResultDocument {
        let input = URL(fileURLWithPath: path)
        _ = try context.documentSize(path)
        let output: URL
        if parsed.has("--in-place") {
            guard parsed.value("--out") == nil, parsed.value("--out-dir") == nil else {
                throw UsageError(
                    message: "--in-place replaces the document: do not give --out or --out-dir with it",
                    usage: signUsage
                )
            }
            output = input
        } else if let out = parsed.value("--out") {
            output = URL(fileURLWithPath: out)
        } else {
            let name = input.deletingPathExtension().lastPathComponent + "-signed.pdf"
            let directory =
                parsed.value("--out-dir").map { URL(fileURLWithPath: $0) } ?? input.deletingLastPathComponent()
            output = directory.appendingPathComponent(name)
        }
        let options = PDFSignatureOptions(
            fieldName: parsed.value("--field"),
            reason: parsed.value("--reason"),
            location: parsed.value("--location"),
            digestAlgorithm: digest
        )
        let result = try await PDFSigner.sign(pdfAt: input, writingTo: output, identity: identity, options: options)
        if !context.json { context.console.out("signed \(path) -> \(output.path) (field \(result.fieldName))") }
        return SignResultDocument(
            document: Format.path(path),
            status: "signed",
            signature: Format.path(output.path),
            signer: identity.certificate.subject,
            format: "pades",
            digest: digest.rawValue,
            field: result.fieldName
        )
    }

    /// Whether the file starts like a PDF.
    static func isPDF(_ bytes: [UInt8]) -> Bool { bytes.starts(with: Array("%PDF-".utf8)) }

    /// Verifies every signature of a PDF; exit 0 only when there is at least one and all are valid.
    static func verifyPDF(
        _ path: String,
        trust: [Certificate],
        policy: ValidationPolicy,
        context: CommandContext
    ) throws -> Int32 {
        let report = try PDFSignatureVerifier.verify(
            pdfAt: URL(fileURLWithPath: path),
            trustAnchors: trust,
            policy: policy
        )
        var signatures: [PDFSignatureDocument] = []
        var lines: [String] = []
        if report.signatures.isEmpty { lines.append("INVALID: \(path) has no signatures") }
        for signature in report.signatures {
            var verification = VerificationDocument(signature.verification)
            verification.valid = signature.isValid
            let pdf = PDFPlacementDocument(
                field: signature.field,
                revision: signature.revision,
                coversWholeFile: signature.coversWholeFile,
                laterChanges: signature.laterChanges.rawValue,
                byteRangeProblem: signature.byteRangeProblem,
                subFilter: signature.subFilter,
                claimedTime: signature.claimedTime.map(Format.isoDate),
                reason: signature.reason,
                location: signature.location
            )
            signatures.append(PDFSignatureDocument(verification: verification, pdf: pdf))
            lines.append("field '\(signature.field)' (revision \(signature.revision) of \(report.revisionCount)):")
            if let problem = signature.byteRangeProblem { lines.append("INVALID: \(problem)") }
            lines.append(verificationText(signature.verification))
            switch signature.laterChanges {
            case .none: lines.append("covers the whole file")
            case .signed: lines.append("later revisions follow, covered by later signatures")
            default: lines.append("WARNING: the file was changed after this signature; the changes are not signed")
            }
        }
        context.emit(
            encoding: PDFVerificationDocument(
                document: Format.path(path),
                valid: report.isValid,
                revisions: report.revisionCount,
                signatures: signatures
            ),
            human: lines.joined(separator: "\n")
        )
        return report.isValid ? CertSign.exitSuccess : CertSign.exitFailure
    }
}
