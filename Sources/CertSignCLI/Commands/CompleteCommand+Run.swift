import CertificateProviders
internal import Durability
import Foundation
import PDFSigning
import SignatureJournal
import Signing

/// What `certsign complete` does with one pending file.
extension Commands {
    /// What completing one pending file wrote and recorded.
    struct CompletedSignature {
        /// The signature file (the `.p7s`, or the signed PDF).
        var output: String
        /// The journal row's ID.
        var record: String
        /// The journal's format name (`cades-lt`, `pades-t`, …).
        var format: String
    }

    /// Completes `file` with `answer` through `coordinator` (which checks it before writing
    /// anything), at the level it was prepared for, recording it under `provider` (the one whose
    /// service answered, or `external`).
    /// - Throws: `.alreadyExists` when the output exists and `--force` was not given; the
    ///   coordinator's and the level's errors.
    static func completeOne(
        _ file: PendingFile,
        answer: PendingSignatureAnswer,
        provider: ProviderID = SigningCoordinator.externalSignerID,
        _ options: CompleteOptions,
        _ coordinator: SigningCoordinator,
        _ context: CommandContext
    ) async throws -> CompletedSignature {
        guard file.isPAdES else {
            let item = try completion(file, answer: answer, options, context)
            let result = try await coordinator.complete(
                item.pending,
                with: item.answer,
                document: item.document,
                provider: provider,
                options: item.options,
                output: item.output
            )
            return CompletedSignature(result)
        }
        let (document, output) = try checkedOutput(file, options)
        let (client, collector) = try levelServices(file, context)
        var completion = PDFCompletionOptions(timestampAuthority: client, replacesExistingOutput: options.force)
        if let collector, let client {
            completion.longTerm = try PAdESLevelUpgrade(level: file.level, authority: client, collector: collector)
        }
        let completed = try await coordinator.completePDF(
            file.pending,
            with: answer,
            pdfAt: document,
            writingTo: output,
            provider: provider,
            options: completion
        )
        return CompletedSignature(
            output: output.path,
            record: completed.record.id,
            format: completed.record.format.rawValue
        )
    }

    /// What completing the CAdES `file` with `answer` takes (``SigningCoordinator/completeEach``
    /// completes many together): its output, and the level it was prepared for.
    /// - Throws: `.alreadyExists` when the output exists and `--force` was not given; the level's
    ///   set-up errors (a TSA URL, `--ca` files).
    static func completion(
        _ file: PendingFile,
        answer: PendingSignatureAnswer,
        _ options: CompleteOptions,
        _ context: CommandContext
    ) throws -> PendingCompletion {
        let (document, output) = try checkedOutput(file, options)
        let (client, collector) = try levelServices(file, context)
        return PendingCompletion(
            file.pending,
            with: answer,
            document: file.pending.detached ? nil : .file(document),
            options: SigningOptions(
                levelUpgrade: try SigningOptions.levelUpgrade(for: file.level, authority: client, collector: collector)
            ),
            output: output
        )
    }

    /// The document and the output of `file`, refusing an output that exists without `--force`.
    private static func checkedOutput(_ file: PendingFile, _ options: CompleteOptions) throws -> (URL, URL) {
        let document = PathText.absolute(file.completion.document)
        let output = completionOutputPath(file, options)
        if !options.force, output != document, FileSystem.exists(output) {
            throw CertificateProviderError(
                .alreadyExists,
                "\(output) exists already; nothing was written. Pass --force to replace it, or choose another "
                    + "--out-dir"
            )
        }
        return (
            URL(filePath: document, directoryHint: .notDirectory), URL(filePath: output, directoryHint: .notDirectory)
        )
    }

    /// The TSA client and the validation-data collector the level `file` was prepared for needs.
    private static func levelServices(
        _ file: PendingFile,
        _ context: CommandContext
    ) throws -> (TimestampAuthorityClient?, ValidationDataCollector?) {
        let client = try context.timestampClient(
            file.completion.tsa.flatMap(URL.init(string:)),
            anchors: file.completion.tsaCA,
            ca: file.completion.ca
        )
        let collector =
            file.level.rank >= SignatureLevel.bLT.rank
            ? try context.validationDataCollector(
                anchorFiles: file.completion.ca,
                certificateFiles: file.completion.tsaCA
            ) : nil
        return (client, collector)
    }

    /// Where the signature of `file` goes: the PDF itself (`--in-place`), `DIR/NAME-signed.pdf` or
    /// `DIR/NAME.p7s` (`--out-dir DIR`), else where the command that started it said (`sign
    /// --no-wait --out-dir`), else beside the document.
    static func completionOutput(_ file: PendingFile, _ options: CompleteOptions) -> URL {
        URL(filePath: completionOutputPath(file, options), directoryHint: .notDirectory)
    }

    /// ``completionOutput(_:_:)`` as an absolute, standardized path.
    static func completionOutputPath(_ file: PendingFile, _ options: CompleteOptions) -> String {
        let document = PathText.absolute(file.completion.document)
        if file.isPAdES, options.inPlace { return document }
        if options.outputDirectory == nil, let output = file.completion.output { return PathText.absolute(output) }
        let name =
            file.isPAdES
            ? URL(filePath: document, directoryHint: .notDirectory).deletingPathExtension().lastPathComponent
                + "-signed.pdf"
            : PathText.lastComponent(document) + ".p7s"
        return PathText.joined(options.outputDirectory ?? PathText.directory(of: document), name)
    }

    /// Removes a completed (or cancelled) pending file.
    /// - Throws: `.fileSystem` when it cannot be removed.
    static func removePendingFile(_ path: String) throws {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw FileSystem.failure("removing", path)
        }
    }
}

/// A signature value as a file gives it: the raw bytes `openssl pkeyutl -sign` writes, or the same
/// as hex or base64 text (a phone app or a web page may hand out text).
enum SignatureValueText {
    /// The value `bytes` hold: decoded from hex or base64 when they are such text (spaces and line
    /// breaks ignored), else the bytes themselves.
    static func decode(_ bytes: [UInt8]) -> [UInt8] {
        let text = bytes.filter { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        guard !text.isEmpty, text.allSatisfy({ $0 >= 0x21 && $0 < 0x7F }) else { return bytes }
        let hexDigits = Set(Array("0123456789abcdefABCDEF".utf8))
        if text.count % 2 == 0, text.allSatisfy(hexDigits.contains) {
            return stride(from: 0, to: text.count, by: 2).map { index in
                UInt8(String(decoding: text[index...(index + 1)], as: UTF8.self), radix: 16) ?? 0
            }
        }
        if let data = Data(base64Encoded: Data(text)) { return Array(data) }
        return bytes
    }
}

extension Commands.CompletedSignature {
    /// What the coordinator made and recorded.
    init(_ result: SigningResult) {
        self.init(output: result.outputURL?.path ?? "", record: result.record.id, format: result.record.format.rawValue)
    }
}
