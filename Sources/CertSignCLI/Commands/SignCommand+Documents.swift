import CertificateProviders
import Foundation
import SignatureJournal
import Signing

#if canImport(Glibc)
import Glibc
#endif

/// `certsign sign`, document by document: each signed (in one batch when it can be), written and reported.
extension Commands {
    /// Signs each document in turn (one unlock for all); a failing document is recorded and the others
    /// are still signed.
    static func signEach(_ run: SignRun) async throws -> [SignResultDocument] {
        let (plan, context) = (run.plan, run.context)
        let documents = plan.documents
        let pades = plan.isPAdES
        let timestampClient = plan.timestampClient
        let outputs = plan.outputs
        var results: [SignResultDocument] = []
        let console = context.console
        // With the signature on stdout, messages go to stderr.
        let toStandardOutput = plan.writesToStandardOutput
        func report(_ text: String) { if toStandardOutput { console.err(text) } else { console.out(text) } }
        // Several files into files: one library batch (a pipeline on every core, one commit per group);
        // one document keeps its byte progress.
        let workingDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        var batched: [Result<SigningResult, CertificateProviderError>]?
        if documents.count > 1, !pades, timestampClient == nil, !documents.contains("-"), !toStandardOutput {
            batched = try await signBatch(run, workingDirectory)
        }
        for (index, path) in documents.enumerated() {
            // SIGINT / SIGTERM (or a cancelled task): the documents not begun are not signed.
            if batched == nil, Task.isCancelled {
                let error = CertificateProviderError(.cancelled, "not signed: the command was interrupted")
                results += documents[index...].map { .failed(Format.path($0), error) }
                break
            }
            do {
                if pades {
                    results.append(try await signPDF(path, run))
                    continue
                }
                var outputURL: URL?
                if case .file(let url) = outputs[index] { outputURL = url }
                let result = try await signOne(
                    index,
                    batched: batched,
                    run,
                    output: outputURL,
                    workingDirectory: workingDirectory
                )
                console.clearProgress()
                if outputURL == nil {
                    console.outBytes(plan.options.writesPEM ? SignaturePEM.armor(result.signature) : result.signature)
                }
                let signed = signedDocument(result, path, plan, workingDirectory)
                results.append(signed)
                if !context.json {
                    let note = signed.replaced == true ? " (replaced the existing file)" : ""
                    report(
                        "signed \(Format.printable(path)) -> \(outputURL.map { Format.printable($0.path) } ?? "standard output")\(note)"
                    )
                }
            } catch let error as CertificateProviderError {
                context.console.clearProgress()
                results.append(.failed(Format.path(path), error))
                // An interrupted batch says once, at the end, what was not signed.
                if error.code != .cancelled {
                    context.console.err(ErrorText.documentFailure(path, error, command: context.command))
                }
            }
        }
        return results
    }

    /// Document `index` of `signEach` (path `plan.documents[index]`): the batch's result for it, or
    /// (one by one, or a batch's document a server signed with a re-issued certificate) signed here.
    private static func signOne(
        _ index: Int,
        batched: [Result<SigningResult, CertificateProviderError>]?,
        _ run: SignRun,
        output outputURL: URL?,
        workingDirectory: URL
    ) async throws -> SigningResult {
        let (plan, coordinator, context) = (run.plan, run.coordinator, run.context)
        let path = plan.documents[index]
        let (providerID, parameters, options) = (run.source.providerID, run.source.parameters, plan.options)
        if let batched, !isStaleCertificate(batched[index]) {
            // The CLI's own words for a missing, unreadable or directory document.
            if case .failure(let error) = batched[index], error.code == .fileSystem {
                _ = try context.documentSize(path)
            }
            return try batched[index].get()
        } else {
            // One by one, or a batch's document a server signed with a re-issued certificate:
            // signed (again) here, after at most one refresh of the certificate list.
            let (document, progress) = try openDocument(index, plan, workingDirectory, context)
            return try await healingStaleCertificate(
                coordinator: coordinator,
                providerID: providerID,
                context: context
            ) {
                try await coordinator.sign(
                    document: document,
                    provider: providerID,
                    parameters: parameters,
                    options: options,
                    output: outputURL,
                    progress: progress
                )
            }
        }
    }

    /// Document `index` of the one-by-one loop (standard input read and wiped) and its progress:
    /// bytes for a large file, else (several documents) a bar that counts documents.
    private static func openDocument(
        _ index: Int,
        _ plan: SignPlan,
        _ workingDirectory: URL,
        _ context: CommandContext
    ) throws -> (Document, SigningProgress?) {
        let path = plan.documents[index]
        let count = plan.documents.count
        let console = context.console
        let document: Document
        let size: Int64
        if path == "-" {
            var data = console.readStandardInput()
            let bytes = Array(data)
            data.resetBytes(in: 0..<data.count)
            document = .bytes(bytes, name: "stdin")
            size = Int64(bytes.count)
        } else {
            size = try context.documentSize(path)
            document = .file(URL(fileURLWithPath: path, isDirectory: false, relativeTo: workingDirectory))
        }
        if size >= progressThreshold {
            let label = count > 1 ? "signing \(index + 1)/\(count)" : "signing"
            return (document, { done, total in console.progress(label, done: done, total: total) })
        }
        // Small documents one by one (a TSA, a remote key): the bar counts documents.
        if count > 1 { console.progress("signing", done: Int64(index), total: Int64(count), counting: "documents") }
        return (document, nil)
    }

    /// Several files into files: one library batch (a pipeline on every core, one commit per group),
    /// with a progress bar that counts documents.
    private static func signBatch(
        _ run: SignRun,
        _ workingDirectory: URL
    ) async throws -> [Result<SigningResult, CertificateProviderError>] {
        let (plan, console) = (run.plan, run.context.console)
        return try await run.coordinator.signEach(
            plan.documents.map { .file(URL(fileURLWithPath: $0, isDirectory: false, relativeTo: workingDirectory)) },
            outputs: plan.outputs.map { output -> URL? in if case .file(let url) = output { url } else { nil } },
            provider: run.source.providerID,
            parameters: run.source.parameters,
            options: plan.options
        ) { done, total in
            console.progress("signing", done: done, total: total, counting: "documents")
        }
    }

    /// One PDF of `sign --format pades`, marked `replaced` when `--force` replaced its output. A PDF
    /// from standard input or for standard output passes through a private temporary file
    /// (``PDFPipeBuffer``, removed on every path); standard output gets the signed PDF only once it
    /// is signed and recorded, never a half-written one.
    private static func signPDF(_ path: String, _ run: SignRun) async throws -> SignResultDocument {
        let (plan, identity) = (run.plan, run.identity)
        let digest =
            try plan.options.digestAlgorithm ?? DigestAlgorithm.preferred(for: identity.key.publicKeyAlgorithm)
        let server = try await run.coordinator.provider(run.source.providerID) as? any DocumentSigning
        let toStandardOutput = pdfGoesToStandardOutput(path, run.arguments)
        let buffer = path == "-" || toStandardOutput ? try PDFPipeBuffer() : nil
        defer { buffer?.remove() }
        let input = path == "-" ? try buffer?.readStandardInput(run.context.console) : nil
        var signed = try await signPDF(
            path,
            identity: identity,
            server: server,
            timestampClient: plan.timestampClient,
            longTerm: plan.padesUpgrade,
            arguments: run.arguments,
            digest: digest,
            journal: (run.coordinator.journal, run.source.providerID),
            pipe: (input, toStandardOutput ? buffer?.signedFile : nil, plan.writesToStandardOutput),
            context: run.context
        )
        if toStandardOutput { try buffer?.copySignedFileToStandardOutput(run.context.console) }
        if plan.replaced.contains(signed.signature ?? "") { signed.replaced = true }
        return signed
    }

    /// The result of one signed CMS / CAdES document: its timestamps, and whether `--force`
    /// replaced its output.
    private static func signedDocument(
        _ result: SigningResult,
        _ path: String,
        _ plan: SignPlan,
        _ workingDirectory: URL
    ) -> SignResultDocument {
        let output = result.outputURL
        let timestamps = result.addedTimestamps.map {
            AddedTimestampDocument(time: Format.isoDate($0.time), tsa: $0.authority)
        }
        let replaced = output.map { plan.replaced.contains($0.standardizedFileURL.path) } ?? false
        return SignResultDocument(
            document: displayPath(path, in: workingDirectory),
            status: "signed",
            signature: output.map { displayPath($0.path, in: workingDirectory) } ?? "-",
            id: result.record.id,
            signer: result.signerCertificate.subject,
            format: result.record.format.rawValue,
            detached: result.record.isDetached,
            digest: result.record.digestAlgorithm.rawValue,
            timestamps: timestamps.isEmpty ? nil : timestamps,
            replaced: replaced ? true : nil
        )
    }
}
