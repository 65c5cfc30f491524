import CertificateProviders
internal import Durability
import Foundation
import PDFSigning
import SignatureJournal
import Signing
import TrustedLists
import ValidationReporting

/// `certsign sign DOC.pdf --format pades` and `certsign verify DOC.pdf`: PAdES inside the PDF.
extension Commands {
    /// Signs each PDF with `identity` as PAdES B-B, or B-T with `timestampClient`, then B-LT or
    /// B-LTA with `longTerm`; a provider whose server builds signatures (`server`) signs the
    /// ByteRange digest in its hash mode. Output: `--out FILE`, `--in-place`, `--out-dir DIR` or
    /// `NAME-signed.pdf` beside the input.
    /// - Parameters:
    ///   - journal: where the signature is recorded (a row per PDF, format `pades` to `pades-lta`,
    ///     the input's digest and size, the signed PDF as its file, or its CMS for standard output),
    ///     and the provider's ID.
    ///   - pipe: for DOCUMENT `-` the file standard input was copied to (`input`), and for standard
    ///     output the file signed into first (`output`); messages then go to standard error.
    static func signPDF(
        _ path: String,
        identity: SigningIdentity,
        server: (any DocumentSigning)? = nil,
        timestampClient: TimestampAuthorityClient? = nil,
        longTerm: PAdESLevelUpgrade? = nil,
        arguments: SignOptions,
        digest: DigestAlgorithm,
        journal: (journal: SignatureJournal, provider: ProviderID),
        pipe: (input: URL?, output: URL?, messagesToStandardError: Bool) = (nil, nil, false),
        context: CommandContext
    ) async throws -> SignResultDocument {
        if pipe.input == nil { _ = try context.documentSize(path) }
        let input = pipe.input ?? URL(fileURLWithPath: path)
        let output = pipe.output ?? pdfOutput(path, arguments)
        // The row describes the PDF as given: hashed before --in-place replaces it.
        let original = try await FileDigest.compute(
            url: input,
            algorithm: digest,
            chunkSize: CMSSigner.defaultChunkSize,
            progress: nil
        )
        let signingTime = Date()
        var options = PDFSignatureOptions(
            fieldName: arguments.field,
            reason: arguments.reason,
            location: arguments.location,
            digestAlgorithm: digest,
            timestampAuthority: timestampClient
        )
        // An existing output was refused before anything was signed, unless --force.
        options.replacesExistingOutput = arguments.force
        options.appearance = arguments.appearance.make()
        options.certification = arguments.certify
        let result: PDFSigningResult
        let levelName: String
        if let longTerm {
            let replacing = arguments.force || arguments.inPlace
            result = try await signPDFLongTerm(input, output, replacing, longTerm, identity, server, options, context)
            levelName = longTerm.level.description
        } else {
            result = try await signPDFFile(input, output, identity, server, options, context)
            levelName = result.timestamp == nil ? "B-B" : "B-T"
        }
        let record = SignatureRecord(
            createdAt: signingTime,
            providerID: journal.provider,
            signerSubject: identity.certificate.subject,
            signerFingerprint: identity.certificate.sha256FingerprintHex,
            documentName: pipe.input == nil ? input.lastPathComponent : "stdin",
            documentSize: original.size,
            documentDigest: original.digest,
            digestAlgorithm: digest,
            format: longTerm?.level.padesFormat ?? (result.timestamp == nil ? .pades : .padesT),
            isDetached: false,
            // A PDF on standard output leaves no file behind: the row keeps its CMS.
            storage: pipe.output == nil
                ? .file(output.standardizedFileURL) : .inline(try PDFPipeBuffer.embeddedCMS(output, result))
        )
        try await recordPDF(record, output: output, replacedInput: output.path == input.path, journal.journal)
        if !context.json {
            let target = pipe.output == nil ? Format.printable(output.path) : "standard output"
            var line = signedPDFLine(path, target: target, result, levelName: levelName)
            if let certification = arguments.certify { line += "; certified, DocMDP \(certification)" }
            if pipe.messagesToStandardError { context.console.err(line) } else { context.console.out(line) }
        }
        return SignResultDocument(
            document: Format.path(path),
            status: "signed",
            signature: pipe.output == nil ? Format.path(output.path) : "-",
            id: record.id,
            signer: identity.certificate.subject,
            format: "pades",
            digest: digest.rawValue,
            timestamps: result.timestamp.map {
                [AddedTimestampDocument(time: Format.isoDate($0.time), tsa: $0.authority)]
            },
            field: result.fieldName,
            level: levelName
        )
    }

    /// `signed DOC -> TARGET (field NAME PAdES LEVEL, timestamp TIME)`.
    private static func signedPDFLine(
        _ path: String,
        target: String,
        _ result: PDFSigningResult,
        levelName: String
    ) -> String {
        let time = result.timestamp.map { ", timestamp \(Format.isoDate($0.time))" } ?? ""
        let level = levelName == "B-B" ? "" : " PAdES \(levelName)\(time)"
        return "signed \(Format.printable(path)) -> \(target) (field \(Format.printable(result.fieldName))\(level))"
    }

    /// Appends the signed PDF's journal row. When that fails, a new PDF is removed again (no signed
    /// file without its row, as for CAdES); a PDF signed in place stays signed (removing it would
    /// lose the document) and the error says so.
    /// - Throws: the journal's error.
    private static func recordPDF(
        _ record: SignatureRecord,
        output: URL,
        replacedInput: Bool,
        _ journal: SignatureJournal
    ) async throws {
        do {
            try await journal.append(record)
        } catch let error as CertificateProviderError {
            guard replacedInput else {
                try? FileManager.default.removeItem(at: output)
                throw error
            }
            throw CertificateProviderError(
                error.code,
                "\(output.path) is signed in place, but its journal row could not be written: \(error.reason)"
            )
        }
    }

    /// Signs `input` to B-LT or B-LTA: signed to a staging file beside `output` and raised there,
    /// then moved into place (renamed over an existing file when `replacing`, else linked, so that
    /// one that appeared meanwhile is not replaced): a level that cannot be reached (no revocation
    /// answer, TSA failure) writes nothing.
    private static func signPDFLongTerm(
        _ input: URL,
        _ output: URL,
        _ replacing: Bool,
        _ longTerm: PAdESLevelUpgrade,
        _ identity: SigningIdentity,
        _ server: (any DocumentSigning)?,
        _ options: PDFSignatureOptions,
        _ context: CommandContext
    ) async throws -> PDFSigningResult {
        let staged = output.deletingLastPathComponent().appendingPathComponent(
            ".\(output.lastPathComponent).\(UUID().uuidString).partial"
        )
        defer { try? FileManager.default.removeItem(at: staged) }
        let result = try await signPDFFile(input, staged, identity, server, options, context)
        _ = try await longTerm.upgrade(pdfAt: staged, writingTo: staged)
        if replacing {
            try FileSystem.rename(staged.path, output.path)
        } else {
            try FileSystem.link(staged.path, output.path)
        }
        return result
    }

    /// Signs `input` into `output` with the local key or the provider's server (healing a stale
    /// certificate selection as the CAdES path does).
    private static func signPDFFile(
        _ input: URL,
        _ output: URL,
        _ identity: SigningIdentity,
        _ server: (any DocumentSigning)?,
        _ options: PDFSignatureOptions,
        _ context: CommandContext
    ) async throws -> PDFSigningResult {
        guard let server else {
            return try await PDFSigner.sign(pdfAt: input, writingTo: output, identity: identity, options: options)
        }
        // The provider's current selection (a refreshed list may have replaced `identity`).
        let current = (try? server.storedCertificate()) ?? identity
        return try await healingStaleCertificate(server: server, identity: current, context: context) {
            try await PDFSigner.sign(pdfAt: input, writingTo: output, identity: $0, server: server, options: options)
        }
    }

    /// Whether the signed PDF of `path` goes to standard output: `--out -`, or DOCUMENT `-` without
    /// `--out` (`--in-place` and `--out-dir` do not take `-`: see `SignOptions.validate`).
    static func pdfGoesToStandardOutput(_ path: String, _ arguments: SignOptions) -> Bool {
        arguments.out == "-" || (path == "-" && arguments.out == nil)
    }

    /// Where the signed PDF of `path` goes: the input itself (`--in-place`), `--out FILE`,
    /// `DIR/NAME-signed.pdf` (`--out-dir DIR`) or `NAME-signed.pdf` beside the input (standard
    /// output: see ``pdfGoesToStandardOutput(_:_:)``).
    static func pdfOutput(_ path: String, _ arguments: SignOptions) -> URL {
        let input = URL(fileURLWithPath: path)
        if arguments.inPlace {
            // Not with --out or --out-dir: checked by SignOptions.validate.
            return input
        }
        if let out = arguments.out { return URL(fileURLWithPath: out) }
        let name = input.deletingPathExtension().lastPathComponent + "-signed.pdf"
        let directory = arguments.outputDirectory.map { URL(fileURLWithPath: $0) } ?? input.deletingLastPathComponent()
        return directory.appendingPathComponent(name)
    }

    /// Whether the file starts like a PDF.
    static func isPDF(_ bytes: [UInt8]) -> Bool { bytes.starts(with: Array("%PDF-".utf8)) }

    /// Whether the readable file at `path` starts like a PDF (only its first bytes are read).
    /// - Throws: as ``CommandContext/checkReadableFile(_:what:)``.
    static func isPDFFile(_ path: String, context: CommandContext, what: String) throws -> Bool {
        _ = try context.checkReadableFile(path, what: what)
        let head = FileHandle(forReadingAtPath: path).flatMap { handle in
            defer { try? handle.close() }
            return try? handle.read(upToCount: 5)
        }
        return head.map { isPDF(Array($0)) } ?? false
    }

    /// Verifies every signature of a PDF: valid only when there is at least one and all are valid:
    /// the CMS, the ByteRange, and (unless `allowChanges`) every later change allowed by the
    /// signature's modification policy. With `fetcher` (`--check-revocation`), revocation is asked
    /// for online. With `file` (a PDF read from standard input), that file is verified and `path`
    /// is only the name shown (`stdin`).
    static func pdfVerification(
        _ path: String,
        file: URL? = nil,
        trust: [Certificate],
        policy: ValidationPolicy,
        fetcher: (any BinaryHTTPFetching)? = nil,
        allowChanges: Bool = false,
        trustedLists: TrustedListSet? = nil
    ) async throws -> VerifiedFile {
        let url = file ?? URL(fileURLWithPath: path)
        let report =
            if let fetcher {
                try await PDFSignatureVerifier.verify(pdfAt: url, trustAnchors: trust, policy: policy, fetcher: fetcher)
            } else {
                try PDFSignatureVerifier.verify(pdfAt: url, trustAnchors: trust, policy: policy)
            }
        var signatures: [PDFSignatureDocument] = []
        var verdicts: [Verdict] = []
        var reportSignatures: [ValidationReport.Signature] = []
        var lines: [String] = []
        if report.signatures.isEmpty { lines.append("FAILED: \(Format.printable(path)) has no signatures") }
        for original in report.signatures {
            let (signature, qualifications) = judged(original, by: trustedLists)
            let verdict = signature.verdict(allowingChanges: allowChanges)
            verdicts.append(verdict.prefixingReason("field '\(signature.field)': "))
            reportSignatures.append(reportSignature(signature, verdict: verdict, qualifications))
            var verification = VerificationDocument(signature.verification)
            verification.valid = verdict.indication == .passed
            verification.indication = verdict.indication.rawValue
            verification.subIndication = verdict.subIndication?.rawValue
            verification.qualifications = qualifications
            signatures.append(PDFSignatureDocument(verification: verification, pdf: PDFPlacementDocument(signature)))
            lines.append(
                "field '\(signature.field)' (revision \(signature.revision) of \(report.revisionCount)): "
                    + verdictLine(
                        verdict,
                        chainSkipped: verdict.subIndication == .noCertificateChainFound
                            && signature.verification.failure == nil && !signature.verification.chainChecked
                    )
            )
            lines += pdfSignatureDetails(signature) + qualificationLines(qualifications)
            lines += laterChangesText(signature, allowChanges: allowChanges)
        }
        if report.unreferencedTrailingBytes > 0 {
            lines.append(
                "WARNING: \(report.unreferencedTrailingBytes) bytes after the last revision are described by no "
                    + "cross-reference section"
            )
        }
        // A PDF without signatures has nothing to pass: it fails, as before.
        let worst =
            report.signatures.isEmpty
            ? Verdict(.failed, nil, "it has no signatures") : Verdict.worst(verdicts)
        let count = "\(report.signatures.count) signature\(report.signatures.count == 1 ? "" : "s")"
        let line =
            worst.indication == .passed
            ? "PASSED: \(Format.printable(path)) (\(count))"
            : "\(worst.indication)\(worst.subIndication.map { ": \($0)" } ?? "") — \(Format.printable(path)): "
                + Format.printable(worst.reason ?? "")
        let document = PDFVerificationDocument(
            document: file == nil ? Format.path(path) : path,
            valid: worst.indication == .passed,
            indication: worst.indication.rawValue,
            subIndication: worst.subIndication?.rawValue,
            revisions: report.revisionCount,
            unreferencedBytes: report.unreferencedTrailingBytes,
            signatures: signatures
        )
        let text = lines.joined(separator: "\n")
        return VerifiedFile(
            indication: worst.indication,
            line: line,
            reportSignatures: reportSignatures,
            document: { .pdf(document) },
            text: { text }
        )
    }

    /// What `--report` says about a PDF signature: its field's name, its verdict (the later changes'
    /// included), the time its signature or document timestamp proves.
    static func reportSignature(
        _ signature: PDFSignatureReport,
        verdict: Verdict,
        _ qualifications: [QualificationDocument]? = nil
    ) -> ValidationReport.Signature {
        let signer = signature.verification.signers.first
        var entry = ValidationReport.Signature(
            indication: verdict.indication,
            subIndication: verdict.subIndication,
            validationTime: signature.verification.validationTime,
            signatureValue: signer?.signatureValue ?? [],
            documentIdentifier: signature.field,
            bestSignatureTime: signature.provenTime,
            signerCertificate: signer?.signerCertificate ?? signature.documentTimestamp?.tsa,
            certificates: signer?.chain ?? signature.verification.chain
        )
        entry.trustServices = qualifications?.first.map { trustServices($0, signer: signer) } ?? []
        return entry
    }

    /// A PDF signature's details after its verdict line: a document timestamp's time and TSA; a
    /// signature's CMS details (its PAdES level in place of the CMS format), past validation, and
    /// its claimed and proven time in words that agree with its level.
    static func pdfSignatureDetails(_ signature: PDFSignatureReport) -> [String] {
        if signature.kind == .documentTimestamp { return documentTimestampText(signature) }
        var lines = verificationDetails(signature.verification, showFormat: false)
        if let past = signature.pastValidationTime {
            lines.append(
                "past validation: verified at \(Format.isoDate(past)), the time the chain of document "
                    + "timestamps after it proves (each timestamp's TSA valid when the next one was applied)"
            )
        }
        let claimed =
            signature.claimedTime.map { "claimed time (/M) \(Format.isoDate($0))" } ?? "no claimed time (/M)"
        let level = signature.level.map { "level: PAdES-\($0); " } ?? ""
        let proven: String
        if let time = signature.provenTime {
            proven = "proven time (signature timestamp) \(Format.isoDate(time))"
        } else if signature.verification.signers.first?.timestamp != nil {
            proven = "no proven time: its signature timestamp is not valid"
        } else if let level = signature.level, level != .bB {
            proven = "its time is proven by a later document timestamp, not a signature timestamp of its own"
        } else {
            proven = "no proven time (no signature timestamp)"
        }
        lines.append("\(level)\(claimed); \(proven)")
        return lines
    }

    /// What the revisions after a signature changed, in words: one line for the class, then each
    /// change the policy does not allow (an error, or a warning under `--allow-changes`).
    static func laterChangesText(_ signature: PDFSignatureReport, allowChanges: Bool) -> [String] {
        var lines: [String] = []
        let docMDP = signature.docMDPPermission.map { " (certified, DocMDP /P \($0))" } ?? ""
        switch signature.laterChanges {
        case .none: lines.append("covers the whole file\(docMDP)")
        case .ltv: lines.append("later revisions only add validation data or metadata\(docMDP)")
        case .signatures: lines.append("later revisions only add signatures and validation data\(docMDP)")
        case .formFields: lines.append("later revisions add signatures and fill form fields\(docMDP)")
        case .annotations: lines.append("later revisions add or change annotations\(docMDP)")
        default: lines.append("later revisions make other changes\(docMDP)")
        }
        let refused = signature.changes.filter { !$0.isAllowed }
        if !refused.isEmpty {
            let label = allowChanges ? "WARNING (--allow-changes): " : ""
            lines.append("\(label)\(refused.count) later change(s) the signature's policy does not allow:")
            lines += refused.prefix(10).map { "  \($0)" }
            if refused.count > 10 { lines.append("  … and \(refused.count - 10) more (see --json)") }
        }
        if !signature.laterRevisionsSigned {
            lines.append("WARNING: the file was changed after the last signature; the changes are not signed")
        }
        return lines
    }

    /// A document timestamp's time and TSA (its verdict is the field's line).
    static func documentTimestampText(_ signature: PDFSignatureReport) -> [String] {
        guard let timestamp = signature.documentTimestamp else { return ["the document timestamp cannot be read"] }
        let tsa = timestamp.tsa?.subject ?? "unknown TSA"
        return [
            timestamp.isValid
                ? "proven time (document timestamp) \(Format.isoDate(timestamp.time)) by \(tsa)"
                : "no proven time (the document timestamp of \(Format.isoDate(timestamp.time)) by \(tsa) is not valid)"
        ]
    }
}
