import CertificateProviders
import Foundation
import PDFSigning
import Signing

/// `certsign sign DOC.pdf --format pades` and `certsign verify DOC.pdf`: PAdES inside the PDF.
extension Commands {
    /// Signs each PDF with `identity` as PAdES B-B, or B-T with `timestampClient`; a provider whose
    /// server builds signatures (`server`) signs the ByteRange digest in its hash mode. Output:
    /// `--out FILE`, `--in-place`, `--out-dir DIR` or `NAME-signed.pdf` beside the input.
    static func signPDF(
        _ path: String,
        identity: SigningIdentity,
        server: (any DocumentSigning)? = nil,
        timestampClient: TimestampAuthorityClient? = nil,
        arguments: SignOptions,
        digest: DigestAlgorithm,
        context: CommandContext
    ) async throws -> SignResultDocument {
        let input = URL(fileURLWithPath: path)
        _ = try context.documentSize(path)
        let output: URL
        if arguments.inPlace {
            // Not with --out or --out-dir: checked by SignOptions.validate.
            output = input
        } else if let out = arguments.out {
            output = URL(fileURLWithPath: out)
        } else {
            let name = input.deletingPathExtension().lastPathComponent + "-signed.pdf"
            let directory =
                arguments.outputDirectory.map { URL(fileURLWithPath: $0) } ?? input.deletingLastPathComponent()
            output = directory.appendingPathComponent(name)
        }
        let options = PDFSignatureOptions(
            fieldName: arguments.field,
            reason: arguments.reason,
            location: arguments.location,
            digestAlgorithm: digest,
            timestampAuthority: timestampClient
        )
        let result: PDFSigningResult
        if let server {
            result = try await PDFSigner.sign(
                pdfAt: input,
                writingTo: output,
                identity: identity,
                server: server,
                options: options
            )
        } else {
            result = try await PDFSigner.sign(pdfAt: input, writingTo: output, identity: identity, options: options)
        }
        if !context.json {
            let level = result.timestamp.map { " PAdES B-T, timestamp \(Format.isoDate($0.time))" } ?? ""
            context.console.out("signed \(path) -> \(output.path) (field \(result.fieldName)\(level))")
        }
        return SignResultDocument(
            document: Format.path(path),
            status: "signed",
            signature: Format.path(output.path),
            signer: identity.certificate.subject,
            format: "pades",
            digest: digest.rawValue,
            timestamps: result.timestamp.map {
                [AddedTimestampDocument(time: Format.isoDate($0.time), tsa: $0.authority)]
            },
            field: result.fieldName,
            level: result.timestamp == nil ? "B-B" : "B-T"
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
                kind: signature.kind.rawValue,
                documentTimestamp: signature.documentTimestamp.map { Format.isoDate($0.time) },
                revision: signature.revision,
                coversWholeFile: signature.coversWholeFile,
                laterChanges: signature.laterChanges.rawValue,
                laterRevisionsSigned: signature.laterRevisionsSigned,
                laterChangesDetail: signature.laterChangesDetail,
                provenTime: signature.provenTime.map(Format.isoDate),
                byteRangeProblem: signature.byteRangeProblem,
                subFilter: signature.subFilter,
                claimedTime: signature.claimedTime.map(Format.isoDate),
                reason: signature.reason,
                location: signature.location
            )
            signatures.append(PDFSignatureDocument(verification: verification, pdf: pdf))
            lines.append("field '\(signature.field)' (revision \(signature.revision) of \(report.revisionCount)):")
            if let problem = signature.byteRangeProblem { lines.append("INVALID: \(problem)") }
            if signature.kind == .documentTimestamp {
                lines.append(documentTimestampText(signature))
            } else {
                lines.append(verificationText(signature.verification))
                let claimed =
                    signature.claimedTime.map { "claimed time (/M) \(Format.isoDate($0))" } ?? "no claimed time (/M)"
                let proven =
                    signature.provenTime.map { "proven time (signature timestamp) \(Format.isoDate($0))" }
                    ?? "no proven time (no valid signature timestamp)"
                lines.append("\(claimed); \(proven)")
            }
            switch signature.laterChanges {
            case .none: lines.append("covers the whole file")
            case .signatures: lines.append("later revisions only add signatures")
            case .formFields: lines.append("later revisions only add signatures and fill form fields")
            default:
                lines.append(
                    "WARNING: later revisions make other changes: \(signature.laterChangesDetail ?? "see the file")"
                )
            }
            if !signature.laterRevisionsSigned {
                lines.append("WARNING: the file was changed after the last signature; the changes are not signed")
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

    /// A document timestamp's verdict, its time and its TSA.
    static func documentTimestampText(_ signature: PDFSignatureReport) -> String {
        let verdict =
            signature.verification.failure.map { "INVALID: \($0.reason)" }
            ?? "VALID: document timestamp (RFC 3161 token, imprint over the revision, TSA chain) verified"
        guard let timestamp = signature.documentTimestamp else { return verdict }
        let tsa = timestamp.tsa?.subject ?? "unknown TSA"
        return verdict
            + (timestamp.isValid
                ? "\nproven time (document timestamp) \(Format.isoDate(timestamp.time)) by \(tsa)"
                : "\nno proven time (the document timestamp of \(Format.isoDate(timestamp.time)) by \(tsa) is not valid)")
    }
}
