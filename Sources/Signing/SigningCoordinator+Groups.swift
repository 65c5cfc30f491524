import CertificateProviders
import Foundation

/// The groups of ``SigningCoordinator/signEach(_:outputs:provider:parameters:options:progress:)``:
/// at most ``SigningCoordinator/batchGroupSize`` documents are signed, made durable and committed
/// at a time; with a local key the next group signs (on every core) while one is committed.
extension SigningCoordinator {
    /// One group's outcomes.
    typealias Outcomes = [Result<SigningResult, CertificateProviderError>]
    /// The local-key groups being signed while another is committed (at most one).
    typealias InFlight = ThrowingTaskGroup<BatchSigningPipeline.Group, any Error>

    /// The groups of ``signEach(_:outputs:provider:parameters:options:progress:)``; with
    /// `stoppingAtFirstFailure` (the form of ``sign(documents:provider:parameters:options:outputDirectory:progress:)``)
    /// the first failed document ends the batch: what was signed before it is recorded, the files
    /// made after it are removed, and its error is thrown.
    func signGroups(
        _ documents: [Document],
        outputs: [URL?],
        provider id: ProviderID,
        parameters: ProviderParameters,
        options: SigningOptions,
        progress: SigningProgress?,
        stoppingAtFirstFailure: Bool
    ) async throws -> Outcomes {
        guard outputs.count == documents.count else {
            throw CertificateProviderError.invalidParameter(
                "\(documents.count) documents but \(outputs.count) outputs: give one output (or nil) per document"
            )
        }
        let resolved = try await resolve(id, parameters: parameters)
        var options = options
        if options.signingTime == nil { options.signingTime = Date() }
        let signer = try localSigner(id, resolved: resolved, options: options)
        Self.removeStaleTemporaries(for: outputs)
        var outcomes: Outcomes = []
        outcomes.reserveCapacity(documents.count)
        let starts = Array(stride(from: 0, to: documents.count, by: Self.batchGroupSize))
        func range(_ number: Int) -> Range<Int> {
            starts[number]..<min(starts[number] + Self.batchGroupSize, documents.count)
        }
        // With a local key the next group signs (on every core) while this one is committed
        // (syncfs, renames, directory sync, journal): at most one group in flight, taken in order.
        try await withThrowingTaskGroup(of: BatchSigningPipeline.Group.self) { inFlight in
            var pending = false
            for number in starts.indices {
                var group: BatchSigningPipeline.Group
                if let signer {
                    if !pending { Self.startSigning(documents, outputs, range(number), signer, in: &inFlight) }
                    guard let made = try await inFlight.next() else { break }
                    pending = false
                    group = made
                } else {
                    group = try await produceEach(
                        documents,
                        outputs,
                        range(number),
                        id: id,
                        resolved: resolved,
                        options
                    )
                }
                let firstFailure = stoppingAtFirstFailure ? Self.cutAtFirstFailure(&group) : nil
                if let signer, firstFailure == nil, !Task.isCancelled, number + 1 < starts.count {
                    Self.startSigning(documents, outputs, range(number + 1), signer, in: &inFlight)
                    pending = true
                }
                do {
                    try await commit(&group.results, temporaries: group.temporaries)
                    for outcome in group.results {
                        outcomes.append(outcome)
                        progress?(Int64(outcomes.count), Int64(documents.count))
                    }
                    try Self.checkContinuing(group.results, firstFailure, outcomes, stoppingAtFirstFailure)
                } catch {
                    // The batch ends here: what the next group made is never acknowledged.
                    if pending { await discardNext(&inFlight) }
                    throw error
                }
                if Task.isCancelled {
                    // Stopped after the group in flight: what the next group made is never
                    // acknowledged, and every document after this group is not signed.
                    if pending { await discardNext(&inFlight) }
                    outcomes += documents[outcomes.count...].map {
                        .failure(CertificateProviderError(.cancelled, "signing '\($0.name)' was cancelled"))
                    }
                    break
                }
            }
        }
        return outcomes
    }

    /// The pipeline's signer when the identity's key is local; nil otherwise, and when a level
    /// upgrade (a TSA, validation data) is asked for per signature on the one-by-one path.
    private func localSigner(
        _ id: ProviderID,
        resolved: ResolvedIdentity,
        options: SigningOptions
    ) throws -> BatchSigningPipeline.Signer? {
        guard case .localKey(let key) = resolved.strategy, options.levelUpgrade == nil else { return nil }
        let algorithm = try CMSSigner.resolve(options.digestAlgorithm, for: resolved.identity)
        return BatchSigningPipeline.Signer(
            providerID: id,
            identity: resolved.identity,
            key: key,
            fingerprint: resolved.fingerprint,
            options: options,
            digestAlgorithm: algorithm,
            signingTime: options.signingTime ?? Date(),
            signingCertificateAttribute: options.format == .cadesBES
                ? try signingCertificateAttribute(for: id, algorithm: algorithm) : nil
        )
    }

    /// Starts signing the documents of `range` on every core (local key only).
    private static func startSigning(
        _ documents: [Document],
        _ outputs: [URL?],
        _ range: Range<Int>,
        _ signer: BatchSigningPipeline.Signer,
        in inFlight: inout InFlight
    ) {
        inFlight.addTask {
            await BatchSigningPipeline.run(
                documents,
                outputs: outputs,
                range: range,
                signer: signer,
                deferringSync: BatchSigningPipeline.syncPlan(outputs, range: range)
            )
        }
    }

    /// Signs the documents of `range` one after the other through the single-signature path (keys
    /// that are not local); a document that fails fails alone.
    private func produceEach(
        _ documents: [Document],
        _ outputs: [URL?],
        _ range: Range<Int>,
        id: ProviderID,
        resolved: ResolvedIdentity,
        _ options: SigningOptions
    ) async throws -> BatchSigningPipeline.Group {
        var results: Outcomes = []
        for index in range {
            do {
                results.append(
                    .success(
                        try await produce(
                            document: documents[index],
                            id: id,
                            resolved: resolved,
                            options: options,
                            output: outputs[index],
                            progress: nil
                        )
                    )
                )
            } catch let error as CertificateProviderError {
                results.append(.failure(error))
            } catch is CancellationError {
                results.append(
                    .failure(CertificateProviderError(.cancelled, "signing '\(documents[index].name)' was cancelled"))
                )
            }
        }
        // No temporary file is still to be synced and renamed.
        return BatchSigningPipeline.Group(results: results, temporaries: [String?](repeating: nil, count: range.count))
    }

    /// The all-or-before form: removes the first failed document and everything after it from the
    /// group (the files made after it are discarded) and returns its error.
    private static func cutAtFirstFailure(_ group: inout BatchSigningPipeline.Group) -> CertificateProviderError? {
        guard let failed = group.results.firstIndex(where: { (try? $0.get()) == nil }) else { return nil }
        for index in (failed + 1)..<group.results.count {
            if case .success(let later) = group.results[index] {
                BatchSigningPipeline.discard(later, temporary: group.temporaries[index])
            }
        }
        var firstFailure: CertificateProviderError?
        if case .failure(let error) = group.results[failed] { firstFailure = error }
        group.results.removeSubrange(failed...)
        group.temporaries.removeSubrange(failed...)
        return firstFailure
    }

    /// After a committed group, in the all-or-before form: throws the first failure (before or in
    /// the commit), or `.cancelled` when the task was cancelled.
    private static func checkContinuing(
        _ group: Outcomes,
        _ firstFailure: CertificateProviderError?,
        _ outcomes: Outcomes,
        _ stoppingAtFirstFailure: Bool
    ) throws {
        if let firstFailure { throw firstFailure }
        if stoppingAtFirstFailure, let failed = group.first(where: { (try? $0.get()) == nil }),
            case .failure(let error) = failed
        {
            throw error
        }
        if Task.isCancelled && stoppingAtFirstFailure {
            let signed = outcomes.filter { (try? $0.get()) != nil }.count
            throw CertificateProviderError(.cancelled, "batch signing was cancelled after \(signed) documents")
        }
    }

    /// Waits for the group in flight and removes what it made: it is never acknowledged.
    private func discardNext(_ inFlight: inout InFlight) async {
        guard let made = try? await inFlight.next() else { return }
        for (index, outcome) in made.results.enumerated() {
            if case .success(let result) = outcome {
                BatchSigningPipeline.discard(result, temporary: made.temporaries[index])
            }
        }
    }
}
