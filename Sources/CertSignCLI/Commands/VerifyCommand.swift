import CertificateProviders
import Foundation
import HTTPClient
import PDFSigning
import RemoteProviderSupport
import Signing
import TrustedLists
import ValidationReporting

/// `certsign verify SIGNATURE…`: one signature or PDF reported in full, many in one run (in
/// parallel, each reported on a line, or as one JSON document).
extension Commands {
    /// `certsign verify SIGNATURE... [--ca FILE...] [--trust system] [--no-chain-check] …`.
    struct VerifyOptions: CommandOptions {
        var signatures: [String] = []
        var content: String?
        var contentDirectory: String?
        var ca: [String] = []
        var trust: TrustSource?
        var noChainCheck = false
        var at: Date?
        var tsaCA: [String] = []
        var crl: [String] = []
        var checkRevocation = false
        var revocationMaxAge: TimeInterval?
        var allowChanges = false
        var report: String?
        var lists = TrustedListSelection()

        /// Whether `--trust system` adds the system's roots.
        var trustsSystem: Bool { trust == .system }
        /// The trusted lists asked for: the `--trusted-list` files, or the cache with `--trust eu`.
        var trustedLists: TrustedListSelection {
            var selection = lists
            selection.usesCache = trust == .eu
            return selection
        }

        static var arguments: [ArgumentBinding<Self>] {
            [
                .many(
                    \.signatures,
                    "SIGNATURE",
                    "a signature (.p7s, PEM or DER) or a signed PDF (FILE.pdf); several are verified in one run;\n'-' "
                        + "reads one from standard input (shown as stdin)",
                    type: .file
                )
            ]
        }

        static var options: [OptionBinding<Self>] {
            [
                .value(
                    \.content,
                    "--content",
                    "DOCUMENT",
                    "the signed document (for a detached signature; default: SIGNATURE without .p7s, used only\n"
                        + "when the signature does not embed its content). For a signature that embeds its content,\n"
                        + "a DOCUMENT given must be that content, byte for byte. One SIGNATURE only",
                    type: .file
                ),
                .value(
                    \.contentDirectory,
                    "--content-dir",
                    "DIR",
                    "where the documents of detached signatures are: DIR/NAME for NAME.p7s (or NAME.p7m,\n"
                        + "NAME.sig), instead of beside the signature",
                    type: .directory
                ),
                .repeatable(
                    \.ca,
                    "--ca",
                    "FILE",
                    "trust anchor certificates (PEM or DER, bundles allowed): exactly these are trusted\n"
                        + "(default: the system's trusted roots, SSL_CERT_FILE or /etc/ssl/certs/ca-certificates.crt)",
                    type: .file
                ),
                .value(
                    \.trust,
                    "--trust",
                    "system|eu",
                    "system: trust the system's roots as well as the --ca anchors; eu: the EU trusted lists of\n"
                        + "the verified cache `trust refresh` fills (--cache DIR), offline",
                    convert: ValueConversions.trust
                ),
                .flag(
                    \.noChainCheck,
                    "--no-chain-check",
                    "check only the signatures (the signer's and its timestamps') and the document, not who\n"
                        + "signed them: no chain is built, to the signer's or to a TSA's anchors"
                ),
                .value(
                    \.at,
                    "--at",
                    "TIME",
                    "validate as of TIME instead of now, for audits: a date (2030-01-01), a date-time (ISO 8601,\n"
                        + "2030-01-01T12:00:00Z; UTC without a zone) or a duration from now (+5y, +6m, +30d, -1y)",
                    convert: ValueConversions.time
                ),
                .repeatable(
                    \.tsaCA,
                    "--tsa-ca",
                    "FILE",
                    "trust anchors for signature timestamps (CAdES-T) (default: the --ca anchors)",
                    type: .file
                ),
                .repeatable(
                    \.crl,
                    "--crl",
                    "FILE",
                    "a CRL (PEM or DER) to check every certificate of the signer's and the TSA's paths against\n"
                        + "(used only within its scope: issuer, distribution point, delta with its base); offline",
                    type: .file
                ),
                .flag(
                    \.checkRevocation,
                    "--check-revocation",
                    "ask the network: OCSP from the certificate's AIA, else its CRL distribution points\n(10 s and "
                        + "256 KiB per OCSP answer, 16 MiB per CRL), for every certificate of the signer's and\nthe "
                        + "TSA's paths but the trust anchors; no answer leaves it INDETERMINATE (TRY_LATER)"
                ),
                .value(
                    \.revocationMaxAge,
                    "--revocation-max-age",
                    "DURATION",
                    "the oldest an OCSP answer without nextUpdate may be (seconds, or 90s, 30m, 12h, 7d;\n"
                        + "default 7d)",
                    convert: ValueConversions.duration("--revocation-max-age")
                ),
                .flag(
                    \.allowChanges,
                    "--allow-changes",
                    "PDF: report changes made after a signature that its policy does not allow as warnings\n"
                        + "instead of failing (exit 0 when the signatures themselves pass)"
                ),
                .value(
                    \.report,
                    "--report",
                    "FILE.xml",
                    "write an ETSI TS 119 102-2 validation report (XML) of every signature verified to FILE.xml\n"
                        + "(replaced atomically; written whatever the verdicts)",
                    type: .file
                ),
            ] + trustedListOptions(\.lists)
        }

        func validate() throws {
            try Commands.validateTrustedListOptions(trustedLists, noChainCheck: noChainCheck)
            if !ca.isEmpty && noChainCheck {
                throw InvalidValue(message: "--ca and --no-chain-check contradict each other")
            }
            if trustsSystem && noChainCheck {
                throw InvalidValue(message: "--trust system and --no-chain-check contradict each other")
            }
            if content != nil && signatures.count > 1 {
                throw InvalidValue(
                    message: "--content names the document of one signature: give one SIGNATURE, or --content-dir DIR "
                        + "for many"
                )
            }
            if report == "-" {
                throw InvalidValue(
                    message: "--report takes a file: standard output carries the verdicts (give --report FILE.xml)"
                )
            }
            if content != nil && contentDirectory != nil {
                throw InvalidValue(message: "--content and --content-dir contradict each other: give one of them")
            }
            if signatures.filter({ $0 == "-" }).count > 1 {
                throw InvalidValue(message: "standard input ('-') can be read only once")
            }
            if content == "-" && signatures.contains("-") {
                throw InvalidValue(
                    message: "--content takes a file: standard input can carry the signature (SIGNATURE '-'), not "
                        + "its document"
                )
            }
        }
    }

    static let verify = CommandDescriptor(
        words: ["verify"],
        summary: "verify CMS / CAdES signatures and signed PDFs, every signer of them",
        discussion: """
            Each signature ends in an ETSI EN 319 102-1 indication, printed first: PASSED (every signer's
            signature verifies over the document; no MD5, SHA-1, RSA < 2048 or EC < 256; each signer's
            certificate is meant for signing and it and its chain are valid now, or at --at, or at the time a
            valid signature timestamp proves), FAILED with a sub-indication when the signature is proven bad
            (HASH_FAILURE: the document changed; SIG_CRYPTO_FAILURE: the signature value does not verify;
            FORMAT_FAILURE: not a signature, or a PDF changed after it as its policy forbids; REVOKED), or
            INDETERMINATE when what was needed to decide is missing (NO_CERTIFICATE_CHAIN_FOUND: no chain to
            the anchors, or --no-chain-check; OUT_OF_BOUNDS_NO_POE: the certificate expired and nothing proves
            the signature existed before; REVOKED_NO_POE; TRY_LATER: no revocation answer; …). The signing
            time a signature states is only the signer's claim. The chain must lead to the --ca anchors, else
            to the system's trusted roots (SSL_CERT_FILE, else /etc/ssl/certs/ca-certificates.crt); --trust
            system adds those to --ca. --trusted-list FILE… or --trust eu (the cache `trust refresh` fills) take
            the EU trusted lists: each chain judged by its service's status at its time, each signer's
            qualification and anchoring service printed. The revocation data a B-LT or B-LTA signature carries is judged at the
            time its timestamp proves: an answer issued then or later proves the status then, however old it
            is now; a certificate revoked after that time does not fail the signature, one revoked before
            does. Nothing is fetched from the network unless --check-revocation is given.
            Exit codes: 0 when every signature PASSED; 1 when one FAILED (or a file cannot be read);
            2 when none FAILED and at least one is INDETERMINATE; 64 usage error.
            A PDF (FILE.pdf) is checked signature by signature: the field, the revision it covers (from the
            cross-reference chain), the claimed (/M) and proven (signature timestamp) time, the CMS as above, and
            what the revisions after it changed, compared object by object from the trailer's /Root (laterChanges:
            none, ltv, signatures, formFields, annotations, other; each change with its revision and objects;
            laterRevisionsSigned). A change the signature's policy does not allow (DocMDP of a certification
            signature, FieldMDP locks; without certification only signatures, validation data and form filling
            are allowed) makes the signature FAILED (FORMAT_FAILURE); --allow-changes makes it a warning.
            One SIGNATURE is reported in full. Several are verified in parallel, one line each (the indication
            with the reason, or ERROR when the file cannot be read), then a count; with --json, one document
            {"valid": N, "invalid": N, "passed": N, "indeterminate": N, "failed": N, "results": [...]} whose
            results are what one SIGNATURE prints; each signature, signer and timestamp carries "indication"
            and "subIndication".
            """,
        examples: [
            "certsign verify invoice.pdf.p7s --ca root-ca.pem",
            "certsign verify signatures/*.p7s --content-dir documents --ca root-ca.pem",
            "certsign verify contract.pdf --trust eu",
        ]
    ) { (options: VerifyOptions, context) in
        try await runVerify(options, context)
    }

    /// One verified file: its verdict, its line among many, and (made only when printed) its JSON
    /// document and its full text.
    struct VerifiedFile: Sendable {
        /// The worst indication of the file's signatures (FAILED for a file that cannot be read).
        let indication: Indication
        let line: String
        /// What `--report` says about each of the file's signatures (none for a file that cannot be read).
        let reportSignatures: [ValidationReport.Signature]
        private let makeDocument: @Sendable () -> VerifiedFileDocument
        private let makeText: @Sendable () -> String

        init(
            indication: Indication,
            line: String,
            reportSignatures: [ValidationReport.Signature] = [],
            document: @escaping @Sendable () -> VerifiedFileDocument,
            text: @escaping @Sendable () -> String
        ) {
            self.indication = indication
            self.line = line
            self.reportSignatures = reportSignatures
            makeDocument = document
            makeText = text
        }

        /// What `--json` prints for this file.
        var document: VerifiedFileDocument { makeDocument() }
        /// The full text of one SIGNATURE.
        var text: String { makeText() }
    }

    /// What every file of one `verify` run shares.
    struct VerifyRun: Sendable {
        let options: VerifyOptions
        let trust: [Certificate]
        let policy: ValidationPolicy
        let fetcher: TransportBinaryFetcher?
        let context: CommandContext
        /// The `--trusted-list` lists, which judge each chain their services anchor.
        var trustedLists: TrustedListSet? = nil
    }

    private static func runVerify(_ options: VerifyOptions, _ context: CommandContext) async throws -> Int32 {
        var policy = ValidationPolicy()
        if let time = options.at { policy.validationTime = time }
        try context.applyRevocationOptions(
            crls: options.crl,
            checkRevocation: options.checkRevocation,
            maximumAge: options.revocationMaxAge,
            timestampAnchorFiles: options.tsaCA,
            to: &policy
        )
        var trust = try context.certificates(inFiles: options.ca, option: "--ca")
        let lists = try loadTrustedLists(options.trustedLists, at: policy.validationTime ?? Date(), context: context)
        trust += lists?.signatureAnchors ?? []
        // No anchor named: the system's roots are the trust, as a browser's or openssl's are.
        if options.trustsSystem || (options.ca.isEmpty && lists == nil && !options.noChainCheck) {
            trust += try SystemTrustStore.certificates()
        }
        // Time-stamping services anchor timestamps (beside the signers' anchors) unless --tsa-ca names them.
        if let lists, options.tsaCA.isEmpty { policy.timestampTrustAnchors = trust + lists.timestampAnchors }
        var run = VerifyRun(
            options: options,
            trust: trust,
            policy: policy,
            fetcher: policy.checkRevocation ? try context.binaryFetcher() : nil,
            context: context
        )
        run.trustedLists = lists
        if options.signatures.count == 1 {
            // One file: reported in full; a file that cannot be read is an error (exit 1), as always.
            let file = try await verifyFile(options.signatures[0], run)
            if let report = options.report { try writeReport([file], to: report) }
            context.emit(encoding: file.document, human: file.text)
            return exitCode(file.indication)
        }
        let files = await verifyFiles(options.signatures, run)
        if let report = options.report { try writeReport(files, to: report) }
        let summary = VerifyManyDocument(files.map { ($0.indication, $0.document) })
        if context.json {
            context.console.out(JSONOutput.encode(summary))
        } else {
            context.console.out(
                "\(summary.passed) of \(files.count) signatures passed (\(summary.failed) failed, "
                    + "\(summary.indeterminate) indeterminate)"
            )
        }
        return exitCode(files.map(\.indication).max() ?? .passed)
    }

    /// The exit code of a verdict: 0 passed, 1 failed, 2 indeterminate (none failed, one could not
    /// be decided).
    static func exitCode(_ indication: Indication) -> Int32 {
        switch indication {
        case .passed: CertSign.exitSuccess
        case .failed: CertSign.exitFailure
        case .indeterminate: CertSign.exitIndeterminate
        }
    }

    /// Verifies `paths` with as many in flight as there are processors; the text lines are printed
    /// in the order of `paths` as soon as each one's turn comes.
    private static func verifyFiles(_ paths: [String], _ run: VerifyRun) async -> [VerifiedFile] {
        let width = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 16)) * 2
        var results = [VerifiedFile?](repeating: nil, count: paths.count)
        var printed = 0
        await withTaskGroup(of: (Int, VerifiedFile).self) { group in
            var next = 0
            func start() {
                guard next < paths.count else { return }
                let index = next
                next += 1
                group.addTask { (index, await verifyReporting(paths[index], run)) }
            }
            for _ in 0..<width { start() }
            while let (index, file) = await group.next() {
                results[index] = file
                start()
                while printed < paths.count, let ready = results[printed] {
                    if !run.context.json { run.context.console.out(ready.line) }
                    printed += 1
                }
            }
        }
        return results.compactMap { $0 }
    }

    /// One file of many: a file that cannot be read is reported (ERROR) and the run goes on.
    private static func verifyReporting(_ path: String, _ run: VerifyRun) async -> VerifiedFile {
        do {
            return try await verifyFile(path, run)
        } catch let error as CertificateProviderError {
            return failedFile(path, code: error.code.rawValue, reason: error.reason)
        } catch {
            return failedFile(path, code: CertificateProviderError.Code.fileSystem.rawValue, reason: "\(error)")
        }
    }

    private static func failedFile(_ path: String, code: String, reason: String) -> VerifiedFile {
        let line = "ERROR: \(Format.printable(path)): \(Format.printable(reason))"
        return VerifiedFile(
            indication: .failed,
            line: line,
            document: { .failed(VerifyFailedDocument(signature: Format.path(path), code: code, error: reason)) },
            text: { line }
        )
    }

    /// Verifies one signature file or PDF (`-`: standard input).
    static func verifyFile(_ path: String, _ run: VerifyRun) async throws -> VerifiedFile {
        let context = run.context
        if path == "-" { return try await verifyStandardInput(run) }
        // A PDF is read by its verifier: only its first bytes are read here to tell which it is.
        if try isPDFFile(path, context: context, what: "signature") {
            return try await pdfVerification(
                path,
                trust: run.trust,
                policy: run.policy,
                fetcher: run.fetcher,
                allowChanges: run.options.allowChanges,
                trustedLists: run.trustedLists
            )
        }
        let signature = try context.readInputFile(path, what: "signature")
        return try await verifyCMSFile(signature, path: path, name: path, run)
    }

    /// Verifies the CMS signature read from `path`, shown as `name`.
    static func verifyCMSFile(
        _ signature: [UInt8],
        path: String,
        name: String,
        _ run: VerifyRun
    ) async throws -> VerifiedFile {
        let (verified, contentPath) = try await verifyCMS(signature, path: path, run)
        let result = run.trustedLists?.judge(verified) ?? verified
        // A detached signature without its document: say which options give it.
        let hint =
            result.failure?.code == .contentMissing && contentPath == nil ? detachedContentHint(path, run) : nil
        let verdict = result.verdict
        let subject = result.signers.first?.signerCertificate.map { " (\($0.subject))" } ?? ""
        let line =
            verdict.indication == .passed
            ? "PASSED: \(Format.printable(name))\(subject)"
            : "\(verdict.indication)\(verdict.subIndication.map { ": \($0)" } ?? "") — \(Format.printable(name)): "
                + Format.printable(verdict.reason ?? "") + (hint.map { "; \($0)" } ?? "")
        let qualifications = qualificationDocuments(result, run.trustedLists)
        return VerifiedFile(
            indication: verdict.indication,
            line: line,
            reportSignatures: reportSignatures(of: result, qualifications),
            document: {
                var verification = VerificationDocument(result)
                verification.signature = path == "-" ? name : Format.path(path)
                verification.content = contentPath.map(Format.path)
                verification.failure?.hint = hint
                verification.qualifications = qualifications
                return .cms(verification)
            },
            text: {
                verificationText(result) + qualificationText(qualifications, signers: result.signers.count)
                    + (hint.map { "\n  hint: \($0)" } ?? "")
            }
        )
    }

    /// The document of a detached signature: `--content`, else `--content-dir`/NAME, else NAME beside
    /// NAME.p7s; taken only when the signature is detached (an attached one is checked over the
    /// content it embeds, never over a file that happens to lie next to it).
    private static func verifyCMS(
        _ signature: [UInt8],
        path: String,
        _ run: VerifyRun
    ) async throws -> (VerificationResult, String?) {
        if let given = run.options.content {
            _ = try run.context.documentSize(given)
            return (try await verifyCMS(signature, content: URL(fileURLWithPath: given), run), given)
        }
        guard let candidate = documentCandidate(path, directory: run.options.contentDirectory),
            FileManager.default.fileExists(atPath: candidate)
        else {
            return (try await verifyCMS(signature, content: nil, run), nil)
        }
        _ = try run.context.documentSize(candidate)
        let result = try await verifyCMS(signature, content: URL(fileURLWithPath: candidate), run)
        if result.isDetached { return (result, candidate) }
        // Attached after all: verified again over the content it embeds alone.
        return (try await verifyCMS(signature, content: nil, run), nil)
    }

    private static func verifyCMS(
        _ signature: [UInt8],
        content: URL?,
        _ run: VerifyRun
    ) async throws
        -> VerificationResult
    {
        if let fetcher = run.fetcher {
            return try await CMSVerifier.verify(
                signature: signature,
                content: content.map { .file($0) },
                trustAnchors: run.trust,
                policy: run.policy,
                fetcher: fetcher
            )
        }
        guard let content else {
            return CMSVerifier.verify(signature: signature, content: nil, trustAnchors: run.trust, policy: run.policy)
        }
        return try CMSVerifier.verify(
            signature: signature,
            contentFileAt: content,
            trustAnchors: run.trust,
            policy: run.policy
        )
    }

    /// What to do about a detached signature whose document was not given nor found.
    static func detachedContentHint(_ path: String, _ run: VerifyRun) -> String {
        let looked =
            documentCandidate(path, directory: run.options.contentDirectory).map { " (it is not at \($0))" } ?? ""
        return "give the signed document with --content FILE\(looked), or --content-dir DIR for the documents of "
            + "several signatures"
    }

    /// Where the document of the detached signature `path` is looked for without `--content`.
    static func documentCandidate(_ path: String, directory: String?) -> String? {
        let url = URL(fileURLWithPath: path)
        guard let directory else {
            return path.hasSuffix(".p7s") ? String(path.dropLast(4)) : nil
        }
        let name = url.lastPathComponent
        for suffix in [".p7s", ".p7m", ".sig"] where name.hasSuffix(suffix) && name.count > suffix.count {
            return URL(fileURLWithPath: directory).appendingPathComponent(String(name.dropLast(suffix.count))).path
        }
        return nil
    }

    /// One signature in full: its verdict line first (`PASSED`, `INDETERMINATE: SUB — reason`,
    /// `FAILED: SUB — reason`), then the details.
    static func verificationText(_ result: VerificationResult) -> String {
        var lines = [verdictLine(result.verdict, chainSkipped: result.failure == nil && !result.chainChecked)]
        lines += verificationDetails(result)
        return lines.joined(separator: "\n")
    }

    /// A verdict in words; one whose only shortcoming is a chain left unchecked (`chainSkipped`:
    /// no failure, no chain checked) says which option did that.
    static func verdictLine(_ verdict: Verdict, chainSkipped: Bool) -> String {
        guard verdict.indication != .passed else { return "PASSED" }
        let sub = verdict.subIndication.map { ": \($0)" } ?? ""
        let reason = verdict.reason.map { Format.printable($0) } ?? ""
        return "\(verdict.indication)\(sub) — \(reason)\(chainSkipped ? " (--no-chain-check)" : "")"
    }

    /// What a verification found, after its verdict: the past validation time, then per signer its
    /// certificate, times, timestamp, digest, format (unless `showFormat` is false: a PDF shows its
    /// PAdES level instead), revocation and chain.
    static func verificationDetails(_ result: VerificationResult, showFormat: Bool = true) -> [String] {
        var lines: [String] = []
        let count = result.signers.count
        if let past = result.pastValidationTime {
            lines.append(
                "past validation: verified at \(Format.isoDate(past)), the time its first archive timestamp proves "
                    + "(each archive timestamp's TSA valid when the next one was applied, the last now)"
            )
        }
        for (index, signer) in result.signers.enumerated() {
            let indent = count > 1 ? "  " : ""
            if count > 1 {
                lines.append(
                    "signer \(index + 1) of \(count): "
                        + verdictLine(signer.verdict, chainSkipped: signer.failure == nil && !signer.chainChecked)
                )
            }
            if let certificate = signer.signerCertificate {
                lines.append("\(indent)signer:       \(certificate.subject)")
                let key = certificate.publicKeyAlgorithm
                lines.append("\(indent)key:          \(key)\(key.isGOST ? "" : " \(certificate.publicKeySize)-bit")")
            }
            if let time = signer.signingTime {
                lines.append("\(indent)signing time: \(Format.localDate(time)) (claimed by the signer)")
            }
            if let timestamp = signer.timestamp {
                let verdict = timestamp.verdict
                let state = verdict.indication.rawValue + (verdict.subIndication.map { ": \($0)" } ?? "")
                lines.append(
                    "\(indent)timestamp:    \(Format.localDate(timestamp.time)) by "
                        + "\(timestamp.tsa?.subject ?? "unknown TSA") (\(state))"
                )
            }
            // GOST digests print their standard's name (GOST R 34.11-2012 256), SHA-2 its short one.
            if let digest = signer.digestAlgorithm.map({ $0.isGOST ? $0.displayName : $0.rawValue })
                ?? signer.digestAlgorithmName
            {
                lines.append("\(indent)digest:       \(digest)")
            }
            if showFormat {
                lines.append(
                    "\(indent)format:       \(formatName(signer.format))\(result.isDetached ? ", detached" : ", attached")"
                )
            }
            if let time = signer.checkedAt, signer.isValid {
                lines.append("\(indent)checked at:   \(Format.localDate(time))")
            }
            if let revocation = signer.revocation { lines += revocationText(revocation, indent: indent) }
            if signer.chainChecked && signer.isValid {
                lines.append("\(indent)chain:        " + signer.chain.map(\.subject).joined(separator: " <- "))
            }
        }
        return lines
    }

    /// A format as people write it: CMS, CAdES-BES, CAdES-T, CAdES-LT, CAdES-LTA (the JSON keeps the raw value).
    static func formatName(_ format: SignatureFormat) -> String {
        switch format {
        case .cms: "CMS"
        case .cadesBES: "CAdES-BES"
        case .cadesT: "CAdES-T"
        case .cadesLT: "CAdES-LT"
        case .cadesLTA: "CAdES-LTA"
        default: format.rawValue
        }
    }
}
