import CertificateProviders
internal import Durability
import Foundation
import PDFSigning
import SignatureJournal
import Signing

/// `certsign extend`: CAdES signatures raised to B-LT or B-LTA in place (and B-LTA renewed).
extension Commands {
    static let extendCommands: [CommandDescriptor] = [extend]

    static var extendUsage: String { extend.usage }

    /// `certsign extend FILE... --level b-lt|b-lta --tsa URL [--tsa-ca FILE]... [--ca FILE]... [--content DOC]`.
    struct ExtendOptions: CommandOptions {
        var files: [String] = []
        var level: SignatureLevel?
        var tsa: URL?
        var tsaCA: [String] = []
        var ca: [String] = []
        var content: String?
        var vri = false

        static var arguments: [ArgumentBinding<Self>] {
            [
                .many(
                    \.files,
                    "FILE",
                    "a signature file (.p7s: CMS, CAdES-BES, -T, -LT or -LTA) or a signed PDF (PAdES)",
                    type: .file
                )
            ]
        }

        static var options: [OptionBinding<Self>] {
            [
                .value(
                    \.level,
                    "--level",
                    "LEVEL",
                    "b-lt (the certificates and OCSP/CRL answers of the signer's and the TSAs' paths) or b-lta\n"
                        + "(b-lt and an archive timestamp; a B-LTA file gets a further one: renewal)",
                    required: true,
                    convert: ValueConversions.level
                )
            ] + timestampAuthorityOptions(\.tsa, \.tsaCA) + [
                .repeatable(
                    \.ca,
                    "--ca",
                    "FILE",
                    "the trust anchors the signer's path ends at (PEM or DER; embedded with the path)",
                    type: .file
                ),
                .value(
                    \.content,
                    "--content",
                    "DOC",
                    "the signed document of a detached signature (default: FILE without its .p7s beside it)",
                    type: .file
                ),
                .flag(\.vri, "--vri", "PDFs: a /VRI entry per signature in the DSS (pyHanko's key)"),
            ]
        }

        func validate() throws {
            if let level, level.rank < SignatureLevel.bLT.rank {
                throw InvalidValue(message: "extend raises signatures to b-lt or b-lta (certsign timestamp makes b-t)")
            }
            if content != nil && files.count > 1 {
                throw InvalidValue(message: "--content names the document of one signature: give one FILE with it")
            }
        }
    }

    static let extend = CommandDescriptor(
        words: ["extend"],
        summary: "raise CAdES and PAdES signatures to B-LT or B-LTA in place (validation data, archive timestamps)",
        discussion: """
            Each FILE gets a signature timestamp where a signer lacks one, then the certificates of the signer's
            and every timestamp's TSA path and an OCSP answer (else a CRL) for each of their certificates but the
            trust anchors (B-LT), then for b-lta an archive-time-stamp-v3 over it all. A B-LTA FILE is renewed:
            the last archive timestamp's validation data and a further archive timestamp. Every distinct
            certificate is asked for once per run. A detached signature's document (beside it, or --content) must
            be the one it signed. Each file is replaced atomically and its journal rows take the new format; a
            file that cannot reach the level is left as it was, reported, and the exit code is then 1. A signed
            PDF gets a document timestamp first when a signature has no timestamp, then a /DSS revision with the
            validation data of every signature and timestamp (--vri: with /VRI entries), then for b-lta a
            document timestamp; a B-LTA PDF is renewed with a further DSS revision and document timestamp.
            """,
        examples: [
            "certsign extend invoice.pdf.p7s --level b-lt --tsa http://tsa.example/tsr --tsa-ca tsa-root.pem --ca root.pem"
        ]
    ) { (options: ExtendOptions, context) in
        guard let level = options.level,
            let client = try context.timestampClient(options.tsa, anchors: options.tsaCA, ca: options.ca)
        else {
            throw UsageError(message: "give --level b-lt|b-lta and --tsa URL", usage: extendUsage)
        }
        let collector = try context.validationDataCollector(anchorFiles: options.ca, certificateFiles: options.tsaCA)
        let upgrade = try LongTermLevelUpgrade(level: level, authority: client, collector: collector)
        let pades = try PAdESLevelUpgrade(level: level, authority: client, collector: collector, addsVRI: options.vri)
        let journal = try context.openJournal()
        // The journal is read once: a scan per file made extending N files against a journal of M rows
        // cost N × M row reads.
        var rowsByFile: [String: [SignatureRecord]] = [:]
        for record in try await journal.records() {
            guard case .file(let url) = record.storage else { continue }
            rowsByFile[url.standardizedFileURL.path, default: []].append(record)
        }
        var results: [ExtendResultDocument] = []
        for path in options.files {
            do {
                let document = try await extendFile(
                    path,
                    options: options,
                    upgrade: upgrade,
                    pades: pades,
                    journal: (journal, rowsByFile[URL(fileURLWithPath: path).standardizedFileURL.path] ?? []),
                    context: context
                )
                results.append(document)
                if !context.json {
                    context.console.out(
                        "extended \(Format.printable(path)) to \(level)\(document.timestamps.map { ": \($0.count) timestamp(s)" } ?? "")"
                    )
                }
            } catch let error as CertificateProviderError {
                results.append(
                    ExtendResultDocument(
                        signature: Format.path(path),
                        status: "failed",
                        error: error.reason,
                        code: error.code.rawValue
                    )
                )
                context.console.err(ErrorText.documentFailure(path, error, command: context.command))
            }
        }
        let failures = results.filter { $0.status == "failed" }.count
        if context.json {
            context.console.out(
                JSONOutput.encode(
                    ExtendDocument(
                        extended: results.count - failures,
                        failed: failures,
                        revocationRequests: await collector.cache.requestCount,
                        results: results
                    )
                )
            )
        }
        return failures == 0 ? CertSign.exitSuccess : CertSign.exitFailure
    }

    /// Gives the rows of an extended file their new format.
    /// - Returns: how many rows were updated.
    /// - Throws: the journal's errors.
    private static func updateRows(
        _ journal: (journal: SignatureJournal, rows: [SignatureRecord]),
        format: SignatureFormat
    ) async throws -> Int {
        for var record in journal.rows {
            record.format = format
            try await journal.journal.update(record)
        }
        return journal.rows.count
    }

    /// Raises the signature file at `path`, replaces it atomically, and updates its journal rows
    /// (`journal.rows`: the rows whose signature file is `path`).
    static func extendFile(
        _ path: String,
        options: ExtendOptions,
        upgrade: LongTermLevelUpgrade,
        pades: PAdESLevelUpgrade,
        journal: (journal: SignatureJournal, rows: [SignatureRecord]),
        context: CommandContext
    ) async throws -> ExtendResultDocument {
        let original = try context.readInputFile(path, what: "signature")
        if isPDF(original) {
            let url = URL(fileURLWithPath: path)
            let result = try await pades.upgrade(pdfAt: url, writingTo: url)
            let updated = try await updateRows(journal, format: pades.level.padesFormat)
            return ExtendResultDocument(
                signature: Format.path(path),
                status: "extended",
                level: pades.level.description,
                format: "pades",
                timestamps: result.addedTimestamps.map {
                    AddedTimestampDocument(time: Format.isoDate($0.time), tsa: $0.authority)
                },
                journalRowsUpdated: updated
            )
        }
        // A PEM file (sign --pem) is raised as its DER and written back as PEM.
        let signature = try SignaturePEM.der(original)
        let facts = try LongTermSignatureFacts(signature: signature)
        if facts.level == .bLTA && upgrade.level == .bLT {
            throw CertificateProviderError(
                .invalidParameter,
                "\(path) is B-LTA already: 'extend --level b-lta' renews it with a further archive timestamp"
            )
        }
        if facts.isDetached {
            let document = options.content ?? (path.hasSuffix(".p7s") ? String(path.dropLast(4)) : nil)
            guard let document, FileSystem.exists(document) else {
                throw CertificateProviderError(
                    .invalidParameter,
                    "the document of the detached signature \(path) is not beside it: give it with --content DOC"
                )
            }
            try await LongTermSignatureFacts.checkContent(of: signature, file: URL(fileURLWithPath: document))
        }
        let result = try await upgrade.upgrade(signature)
        // Signatures are public artifacts: 0644 (less the umask), written atomically, PEM when they were.
        try FileSystem.writeAtomically(path, SignaturePEM.encoding(result.signature, like: original), mode: 0o644)
        let updated = try await updateRows(journal, format: upgrade.format)
        return ExtendResultDocument(
            signature: Format.path(path),
            status: "extended",
            level: upgrade.level.description,
            format: upgrade.format.rawValue,
            timestamps: result.addedTimestamps.map {
                AddedTimestampDocument(time: Format.isoDate($0.time), tsa: $0.authority)
            },
            journalRowsUpdated: updated
        )
    }
}
