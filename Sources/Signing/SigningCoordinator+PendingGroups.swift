public import CertificateProviders
internal import Durability
public import Foundation

/// One pending signature with the value its key made, for
/// ``SigningCoordinator/completeEach(_:provider:progress:)``.
public struct PendingCompletion: Sendable {
    /// What was prepared, here or in another process.
    public var pending: PendingSignature
    /// The answer: the key's signature of the pending signature's data to sign, or a CMS made
    /// elsewhere over the same document.
    public var answer: PendingSignatureAnswer
    /// The document again, for an attached signature (its digest must be the prepared one); nil for
    /// a detached one.
    public var document: Document?
    /// The level upgrade (the other options were fixed when it was prepared).
    public var options: SigningOptions
    /// The file to write, or nil to keep the signature in the journal.
    public var output: URL?

    /// Describes one completion; the parameters are those of
    /// ``SigningCoordinator/complete(_:with:document:provider:options:output:)``.
    public init(
        _ pending: PendingSignature,
        with answer: PendingSignatureAnswer,
        document: Document? = nil,
        options: SigningOptions = SigningOptions(),
        output: URL? = nil
    ) {
        self.pending = pending
        self.answer = answer
        self.document = document
        self.options = options
        self.output = output
    }

    /// Describes one completion with the value the key made (`.signatureValue(signatureValue)`).
    public init(
        _ pending: PendingSignature,
        signatureValue: [UInt8],
        document: Document? = nil,
        options: SigningOptions = SigningOptions(),
        output: URL? = nil
    ) {
        self.init(pending, with: .signatureValue(signatureValue), document: document, options: options, output: output)
    }
}

extension SigningCoordinator {
    /// Completes many pending signatures as
    /// ``signEach(_:outputs:provider:parameters:options:progress:)`` signs many documents: each is
    /// checked and made as ``complete(_:signatureValue:document:provider:options:output:)`` does (a
    /// failing one fails alone, writing nothing; a group's items on one worker per core), and per group of ``batchGroupSize`` the files are
    /// made durable together (one `syncfs(2)` per file system, then the renames, one sync per
    /// directory) and the group's records are committed to the journal in one transaction. A result
    /// is returned only once its file and its record are durable.
    /// - Parameters:
    ///   - items: the pending signatures and their values.
    ///   - provider: the ID the journal records the signatures under.
    ///   - progress: called after each group with the completions done and the total.
    /// - Returns: one result per item, in order.
    public func completeEach(
        _ items: [PendingCompletion],
        provider: ProviderID = SigningCoordinator.externalSignerID,
        progress: SigningProgress? = nil
    ) async -> [Result<SigningResult, CertificateProviderError>] {
        let outputs = items.map(\.output)
        Self.removeStaleTemporaries(for: outputs)
        var outcomes: Outcomes = []
        outcomes.reserveCapacity(items.count)
        for start in stride(from: 0, to: items.count, by: Self.batchGroupSize) {
            let range = start..<min(start + Self.batchGroupSize, items.count)
            let deferring = BatchSigningPipeline.syncPlan(outputs, range: range)
            // Checking values and building signatures is CPU work: the group's items run on the
            // batch's workers (one per core); the journal takes the group in one commit after.
            let made = await ConcurrentIndexes.map(range) { index in
                await self.completeDeferring(items[index], provider, deferring[index - range.lowerBound])
            }
            var group: Outcomes = made.map(\.0)
            let temporaries = made.map(\.1)
            do {
                try await commit(&group, temporaries: temporaries)
            } catch {
                // The journal refused the group: `record` removed its files; none is acknowledged.
                let failure =
                    error as? CertificateProviderError
                    ?? CertificateProviderError(.storeCorrupted, "the journal refused the signatures: \(error)")
                group = group.map { outcome in (try? outcome.get()) == nil ? outcome : .failure(failure) }
            }
            outcomes += group
            progress?(Int64(outcomes.count), Int64(items.count))
        }
        return outcomes
    }

    /// One completion of a group: the result and, when its file is made durable with the group, the
    /// temporary file that holds it.
    nonisolated private func completeDeferring(
        _ item: PendingCompletion,
        _ provider: ProviderID,
        _ deferring: Bool
    ) async -> (Result<SigningResult, CertificateProviderError>, String?) {
        do {
            guard deferring, let output = item.output else {
                return (.success(try await completedSignature(item, provider: provider, writing: true)), nil)
            }
            let result = try await completedSignature(item, provider: provider, writing: false)
            let bytes = Self.outputBytes(result.signature, item.options)
            return (.success(result), try FileSystem.writeTemporary(for: output.path, bytes, mode: 0o644))
        } catch let error as CertificateProviderError {
            return (.failure(error), nil)
        } catch {
            let name = item.pending.documentName ?? item.pending.id
            return (.failure(CertificateProviderError(.cancelled, "completing '\(name)' was cancelled")), nil)
        }
    }
}
