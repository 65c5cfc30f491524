import CertificateProviders
internal import Durability
import Foundation
import PDFSigning
import SignatureJournal
import Signing

/// `certsign complete`: two-phase signing, second half. Each `.pending` file gets its signature
/// value, checked before anything is written; the signature is written, raised to the prepared
/// level, recorded in the journal, and the pending file removed.
extension Commands {
    /// `certsign complete PENDING... (--signature-value FILE... | --signature-value-dir DIR | --cms FILE...)`.
    struct CompleteOptions: CommandOptions {
        var pendingFiles: [String] = []
        var signatureValues: [String] = []
        var cmsFiles: [String] = []
        var signatureValueDirectory: String?
        var outputDirectory: String?
        var inPlace = false
        var force = false

        static var arguments: [ArgumentBinding<Self>] {
            [.many(\.pendingFiles, "PENDING", "a .pending file certsign prepare wrote", type: .file)]
        }

        static var options: [OptionBinding<Self>] {
            [
                .repeatable(
                    \.signatureValues,
                    "--signature-value",
                    "FILE",
                    "the signature value of each PENDING, in order (one FILE per PENDING; '-' reads standard input,\n"
                        + "with one PENDING): raw bytes as openssl pkeyutl -sign writes them, or hex or base64 text",
                    type: .file
                ),
                .repeatable(
                    \.cmsFiles,
                    "--cms",
                    "FILE",
                    "instead of a value: a CMS signature of each PENDING's document made elsewhere (openssl cms\n"
                        + "-sign -cades, pyHanko over a PDF's digest), DER or PEM, one FILE per PENDING in order",
                    type: .file
                ),
                .value(
                    \.signatureValueDirectory,
                    "--signature-value-dir",
                    "DIR",
                    "read the value of NAME.pending from DIR/NAME.sig instead",
                    type: .directory
                ),
                .value(
                    \.outputDirectory,
                    "--out-dir",
                    "DIR",
                    "write DIR/NAME.p7s or DIR/NAME-signed.pdf (default: beside the document)",
                    type: .directory
                ),
                .flag(\.inPlace, "--in-place", "pades: replace each PDF with its signed version (atomically)"),
                .flag(\.force, "--force", "replace signature files that exist already (atomically)"),
            ]
        }

        func validate() throws {
            let sources = [!signatureValues.isEmpty, signatureValueDirectory != nil, !cmsFiles.isEmpty]
            if sources.filter({ $0 }).count != 1 {
                throw InvalidValue(
                    message:
                        "give the values with --signature-value FILE..., --signature-value-dir DIR or --cms FILE..."
                        + " (one of them)"
                )
            }
            if !signatureValues.isEmpty, signatureValues.count != pendingFiles.count {
                throw InvalidValue(
                    message: "give one --signature-value per PENDING, in order (\(pendingFiles.count) PENDING, "
                        + "\(signatureValues.count) --signature-value)"
                )
            }
            if !cmsFiles.isEmpty, cmsFiles.count != pendingFiles.count {
                throw InvalidValue(
                    message: "give one --cms per PENDING, in order (\(pendingFiles.count) PENDING, "
                        + "\(cmsFiles.count) --cms)"
                )
            }
            if (signatureValues + cmsFiles).contains("-"), pendingFiles.count > 1 {
                throw InvalidValue(message: "--signature-value - and --cms - (standard input) complete one PENDING")
            }
            if inPlace, outputDirectory != nil {
                throw InvalidValue(message: "--in-place replaces the document: do not give --out-dir with it")
            }
        }
    }

    static let complete = CommandDescriptor(
        words: ["complete"],
        summary: "complete prepared signatures with their signature values or CMS signatures (two-phase signing)",
        discussion: """
            The value of each PENDING (from --signature-value FILE, one per PENDING in order, or from
            DIR/NAME.sig with --signature-value-dir DIR) must verify with the prepared certificate over the
            prepared digest, the pending file must not have been edited and the document must be the one
            prepared (a PDF changed since is refused); only then is the signature written (DOCUMENT.p7s, or
            NAME-signed.pdf / --in-place for PAdES, atomically), raised to the prepared level, recorded in the
            journal, and the pending file removed. A failing PENDING writes nothing and stays; the others are
            still completed, and the exit code is then 1.

            With --cms FILE the answer is a whole CMS signature made elsewhere over the prepared document (for a PDF:
            over its prepared ByteRange digest): it must verify, have one signer whose certificate is the prepared
            one, and its messageDigest must be the prepared digest; it keeps its own signed attributes, and the
            prepared level is added to it.
            """,
        examples: [
            "certsign complete contract.pdf.pending --signature-value contract.pdf.sig",
            "certsign complete *.pending --signature-value-dir signed-values/",
            "certsign complete report.txt.pending --cms report.txt.p7s.from-card",
        ]
    ) { (options: CompleteOptions, context) in
        try await runComplete(options, context)
    }

    /// Completes every pending file, reporting a failing one and going on with the others. CAdES
    /// signatures are completed together (`SigningCoordinator.completeEach`: one flush per file
    /// system and one journal transaction per group), PDFs one by one; results print in order.
    private static func runComplete(_ options: CompleteOptions, _ context: CommandContext) async throws -> Int32 {
        if let directory = options.outputDirectory { try context.makeOutputDirectory(directory) }
        let coordinator = SigningCoordinator(registry: ProviderRegistry(), journal: try context.openJournal())
        var outcomes = [Result<(PendingFile, CompletedSignature), CertificateProviderError>?](
            repeating: nil,
            count: options.pendingFiles.count
        )
        // Reading the pending files and their answers is CPU work (JSON, certificates): on the
        // batch's workers, one per core; PDFs are then completed one at a time, the rest together.
        let pendingFiles = options.pendingFiles
        let read = await ConcurrentIndexes.map(pendingFiles.indices) {
            index -> Result<(PendingFile, PendingSignatureAnswer), CertificateProviderError> in
            do {
                let file = try PendingFile(contentsOf: pendingFiles[index], context: context)
                return .success((file, try answer(index, of: pendingFiles[index], options, context)))
            } catch let error as CertificateProviderError {
                return .failure(error)
            } catch {
                return .failure(.malformedInput("\(pendingFiles[index]): \(error)"))
            }
        }
        var together: [(index: Int, file: PendingFile, item: PendingCompletion)] = []
        for (index, entry) in read.enumerated() {
            do {
                let (file, answer) = try entry.get()
                if file.isPAdES {
                    let completed = try await completeOne(file, answer: answer, options, coordinator, context)
                    outcomes[index] = .success((file, completed))
                } else {
                    together.append((index, file, try completion(file, answer: answer, options, context)))
                }
            } catch let error as CertificateProviderError {
                outcomes[index] = .failure(error)
            }
        }
        let made = await coordinator.completeEach(together.map(\.item))
        for (entry, outcome) in zip(together, made) {
            outcomes[entry.index] = outcome.map { (entry.file, CompletedSignature($0)) }
        }
        // The completed ones' pending files go, several at a time: an unlink that frees disk blocks
        // waits for the device when the file system discards them (the `discard` mount option).
        let completedOutcomes = outcomes
        let removals = await ConcurrentIndexes.map(pendingFiles.indices, workers: 8) {
            index -> CertificateProviderError? in
            guard case .success = completedOutcomes[index] else { return nil }
            do { try removePendingFile(pendingFiles[index]) } catch let error as CertificateProviderError {
                return error
            } catch { return CertificateProviderError(.fileSystem, "removing \(pendingFiles[index]): \(error)") }
            return nil
        }
        var results: [CompletedDocument] = []
        for (index, (path, outcome)) in zip(options.pendingFiles, outcomes).enumerated() {
            do {
                guard let outcome else { continue }
                let (file, result) = try outcome.get()
                if let removal = removals[index] { throw removal }
                results.append(CompletedDocument(completed: path, file, result))
                if !context.json {
                    context.console.out(
                        "completed \(Format.printable(path)) -> \(Format.printable(result.output)) "
                            + "(\(result.format), \(file.level))"
                    )
                }
            } catch let error as CertificateProviderError {
                results.append(
                    CompletedDocument(
                        pendingFile: Format.path(path),
                        status: "failed",
                        error: error.reason,
                        code: error.code.rawValue
                    )
                )
                context.console.err(ErrorText.documentFailure(path, error, command: context.command))
            }
        }
        let failed = results.filter { $0.status == "failed" }.count
        if context.json {
            context.console.out(
                JSONOutput.encode(CompleteDocument(completed: results.count - failed, failed: failed, results: results))
            )
        }
        return failed == 0 ? CertSign.exitSuccess : CertSign.exitFailure
    }

    /// The answer of the `index`th PENDING: its CMS (`--cms`), or its signature value as raw bytes,
    /// or hex or base64 text.
    /// - Throws: `.fileSystem` when the file cannot be read; `.malformedInput` when it is empty.
    private static func answer(
        _ index: Int,
        of pendingPath: String,
        _ options: CompleteOptions,
        _ context: CommandContext
    ) throws -> PendingSignatureAnswer {
        if !options.cmsFiles.isEmpty {
            let file = options.cmsFiles[index]
            let cms =
                file == "-"
                ? Array(context.console.readStandardInput()) : try context.readInputFile(file, what: "CMS file")
            guard !cms.isEmpty else {
                throw CertificateProviderError.malformedInput("the CMS file for \(pendingPath) is empty")
            }
            return .cms(cms)
        }
        let bytes: [UInt8]
        if let directory = options.signatureValueDirectory {
            let name = PathText.lastComponent(pendingPath)
            let stem = name.hasSuffix(PendingFile.suffix) ? String(name.dropLast(PendingFile.suffix.count)) : name
            bytes = try context.readInputFile(
                PathText.joined(directory, stem + ".sig"),
                what: "signature value file"
            )
        } else if options.signatureValues[index] == "-" {
            bytes = Array(context.console.readStandardInput())
        } else {
            bytes = try context.readInputFile(options.signatureValues[index], what: "signature value file")
        }
        let value = SignatureValueText.decode(bytes)
        guard !value.isEmpty else {
            throw CertificateProviderError.malformedInput("the signature value for \(pendingPath) is empty")
        }
        return .signatureValue(value)
    }
}
