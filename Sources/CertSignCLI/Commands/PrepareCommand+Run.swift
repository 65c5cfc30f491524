import CertificateProviders
internal import Durability
import Foundation
import PDFSigning
import SignatureJournal
import Signing

/// What `certsign prepare` does with each document.
extension Commands {
    /// Prepares every document, reporting a failing one and going on with the others.
    static func runPrepare(_ options: PrepareOptions, _ context: CommandContext) async throws -> Int32 {
        let certificates = try context.certificates(inFiles: [options.certificate], option: "--certificate")
        guard let certificate = certificates.first else {
            throw CertificateProviderError.malformedInput("--certificate \(options.certificate) holds no certificate")
        }
        let chain =
            Array(certificates.dropFirst()) + (try context.certificates(inFiles: options.chain, option: "--chain"))
        if let directory = options.outputDirectory { try context.makeOutputDirectory(directory) }
        let level = options.level ?? (options.tsa == nil ? .bB : .bT)
        let completion = PendingFile.Completion(
            document: "",
            level: level.rawValue,
            tsa: options.tsa?.absoluteString,
            tsaCA: options.tsaCA.map(absolutePath),
            ca: options.ca.map(absolutePath)
        )
        // Preparing records nothing: the journal hears of the signature when it is completed.
        let coordinator = SigningCoordinator(registry: ProviderRegistry(), journal: try SignatureJournal.inMemory())
        let timestampClient =
            options.format == .pades ? try context.timestampClient(options.tsa, anchors: options.tsaCA) : nil
        var results: [PreparedDocument] = []
        let queue = try namedQueueJournal(context)
        // The documents of a group are prepared on the batch's workers (one per core); their pending
        // files are written together, made durable together (one flush per file system, as a signing
        // batch does), then reported in order.
        let documents = options.documents
        for start in stride(from: 0, to: documents.count, by: SigningCoordinator.batchGroupSize) {
            let range = start..<min(start + SigningCoordinator.batchGroupSize, documents.count)
            let group = await ConcurrentIndexes.map(range) { index in
                let path = documents[index]
                let outcome: Result<(String, PendingFile), CertificateProviderError>
                var encoded: (json: [UInt8], report: PreparedDocument)?
                do {
                    var file = PendingFile(
                        pending: try await prepareOne(
                            path,
                            certificate: certificate,
                            chain: chain,
                            options: options,
                            coordinator: coordinator,
                            timestampClient: timestampClient,
                            context: context
                        ),
                        completion: completion
                    )
                    // Made absolute once (the current directory read once), then used for every path.
                    let documentPath = absolutePath(path)
                    file.completion.document = documentPath
                    let pendingPath = pendingFilePath(for: documentPath, directory: options.outputDirectory)
                    // Encoded here, on the workers: the file's JSON and the document's report.
                    encoded = (try file.jsonData(), PreparedDocument(documentPath, pendingFile: pendingPath, file))
                    outcome = .success((pendingPath, file))
                } catch let error as CertificateProviderError {
                    outcome = .failure(error)
                } catch {
                    outcome = .failure(CertificateProviderError(.cancelled, "preparing \(path) stopped: \(error)"))
                }
                return (path: path, outcome: outcome, encoded: encoded)
            }
            var written = PendingFile.writeAll(group.map(\.outcome), jsonData: group.map { $0.encoded?.json })
            if let queue {
                // One transaction for the group's queue items; when it fails, none of them is queued.
                try await enqueue(&written, in: queue)
            }
            for ((path, _, encoded), outcome) in zip(group, written) {
                switch outcome {
                case .success:
                    guard let document = encoded?.report else { continue }
                    results.append(document)
                    if !context.json { context.console.out(document.humanText) }
                case .failure(let error):
                    results.append(PreparedDocument(failed: path, error))
                    context.console.err(ErrorText.documentFailure(path, error, command: context.command))
                }
            }
        }
        let failed = results.filter { $0.status == "failed" }.count
        if context.json {
            context.console.out(
                JSONOutput.encode(PrepareDocument(prepared: results.count - failed, failed: failed, results: results))
            )
        }
        return failed == 0 ? CertSign.exitSuccess : CertSign.exitFailure
    }

    /// The pending signature of one document.
    private static func prepareOne(
        _ path: String,
        certificate: Certificate,
        chain: [Certificate],
        options: PrepareOptions,
        coordinator: SigningCoordinator,
        timestampClient: TimestampAuthorityClient?,
        context: CommandContext
    ) async throws -> PendingSignature {
        _ = try context.documentSize(path)
        let url = URL(fileURLWithPath: path)
        let scheme = options.scheme.map { SignatureScheme($0.rawValue) }
        guard options.format == .pades else {
            return try await coordinator.prepare(
                document: .file(url),
                certificate: certificate,
                chain: chain,
                scheme: scheme,
                options: SigningOptions(
                    format: options.format == .cms ? .cms : .cadesBES,
                    isDetached: !options.attached,
                    digestAlgorithm: options.digest
                )
            )
        }
        let digest = try options.digest ?? DigestAlgorithm.preferred(for: certificate.publicKeyAlgorithm)
        return try PDFSigner.prepare(
            pdfAt: url,
            certificate: certificate,
            chain: chain,
            scheme: scheme,
            options: PDFSignatureOptions(
                fieldName: options.field,
                reason: options.reason,
                location: options.location,
                digestAlgorithm: digest,
                timestampAuthority: timestampClient
            )
        )
    }

    /// `DIR/NAME.pending`, or `NAME.pending` beside the document.
    static func pendingFilePath(for document: String, directory: String?) -> String {
        PathText.joined(
            directory ?? PathText.directory(of: document),
            PathText.lastComponent(PathText.absolute(document)) + PendingFile.suffix
        )
    }

    /// `path` made absolute against the current directory (kept in the pending file, which
    /// `complete` may read from elsewhere).
    static func absolutePath(_ path: String) -> String { PathText.absolute(path) }

    /// Queues the written pending files of a group in `journal` in one transaction; when it fails,
    /// each of them fails with its error (their `.pending` files stay).
    private static func enqueue(
        _ written: inout [Result<(String, PendingFile), CertificateProviderError>],
        in journal: SignatureJournal
    ) async throws {
        let items = try written.compactMap { outcome in
            try (try? outcome.get()).map { try queueItem($0.1, output: nil) }
        }
        guard !items.isEmpty else { return }
        do {
            try await journal.enqueuePendingWork(items)
        } catch let error as CertificateProviderError {
            written = written.map { outcome in (try? outcome.get()) == nil ? outcome : .failure(error) }
        }
    }
}
