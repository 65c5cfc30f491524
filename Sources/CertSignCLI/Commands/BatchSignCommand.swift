import CertificateProviders
import Foundation
import SignatureJournal
import Signing

extension Commands {
    /// `certsign sign DOC…` with a key that signs in batches (a CSC credential): the documents are
    /// signed in chunks of the key's `maximumBatchSize` per output directory, each chunk with one
    /// authorization (one PIN / OTP use) through `SigningCoordinator.sign(documents:)`. Output, JSON
    /// and exit code are those of the one-by-one loop; a failing chunk reports each of its documents.
    static func signInBatches(
        _ paths: [String],
        key: any BatchSigningKey,
        coordinator: SigningCoordinator,
        providerID: ProviderID,
        parameters: ProviderParameters,
        options: SigningOptions,
        outputDirectory: String?,
        context: CommandContext
    ) async throws -> Int32 {
        var results: [SignResultDocument] = []
        var failures = 0
        func fail(_ path: String, _ error: CertificateProviderError) {
            failures += 1
            results.append(.failed(Format.path(path), error))
            context.console.err("certsign: \(Format.printable(path)): \(Format.printable(error.reason))")
        }
        // Readable documents grouped by the directory their signature goes to, in order.
        var groups: [(directory: URL, paths: [String])] = []
        for path in paths {
            do {
                _ = try context.documentSize(path)
            } catch let error as CertificateProviderError {
                fail(path, error)
                continue
            }
            let directory =
                outputDirectory.map { URL(fileURLWithPath: $0) }
                ?? URL(fileURLWithPath: path).deletingLastPathComponent()
            if let index = groups.firstIndex(where: { $0.directory == directory }) {
                groups[index].paths.append(path)
            } else {
                groups.append((directory, [path]))
            }
        }
        let chunkSize = max(1, key.maximumBatchSize)
        for group in groups {
            for start in stride(from: 0, to: group.paths.count, by: chunkSize) {
                try Task.checkCancellation()
                let chunk = Array(group.paths[start..<min(start + chunkSize, group.paths.count)])
                do {
                    let signed = try await coordinator.sign(
                        documents: chunk.map { .file(URL(fileURLWithPath: $0)) },
                        provider: providerID,
                        parameters: parameters,
                        options: options,
                        outputDirectory: group.directory
                    )
                    for (path, result) in zip(chunk, signed) {
                        let output = result.outputURL?.path ?? ""
                        results.append(
                            SignResultDocument(
                                document: Format.path(path),
                                status: "signed",
                                signature: Format.path(output),
                                id: result.record.id,
                                signer: result.signerCertificate.subject,
                                format: options.format.rawValue,
                                detached: options.isDetached,
                                digest: result.record.digestAlgorithm.rawValue
                            )
                        )
                        if !context.json {
                            context.console.out("signed \(Format.printable(path)) -> \(Format.printable(output))")
                        }
                    }
                } catch let error as CertificateProviderError {
                    for path in chunk { fail(path, error) }
                }
            }
        }
        if context.json {
            context.console.out(
                JSONOutput.encode(SignDocument(results: results))
            )
        } else {
            context.console.out("\(paths.count - failures) of \(paths.count) documents signed")
        }
        return failures == 0 ? CertSign.exitSuccess : CertSign.exitFailure
    }
}
