import CertificateProviders
import Foundation
import SignatureJournal
import Signing
import Synchronization

/// Finishing a signature that waited for a person's approval: what `pending resume` does for one
/// `.pending` file and `worker` for each item it takes from the journal's queue.
extension Commands {
    /// The key of the provider that started the operations, opened as `sign` opens it, and the
    /// coordinator that completes what it approved.
    struct ApprovalResumer: Sendable {
        let providerID: ProviderID
        let registry: ProviderRegistry
        /// How the provider's signatures wait: its key, or its server.
        let route: ApprovalRoute
        /// Completes into the command's journal (outside a claim).
        let coordinator: SigningCoordinator

        /// Opens `providerID` with `input` (`--param`, `--param-env`, `--param-file`).
        /// - Throws: `.unsupportedOperation` when its key cannot ask about operations waiting for an
        ///   approval; the provider's errors.
        static func open(
            _ providerID: ProviderID,
            _ input: ProviderParameterInput,
            journal: SignatureJournal,
            _ context: CommandContext
        ) async throws -> ApprovalResumer {
            let parameters = try context.providerParameters(input, for: providerID)
            let registry = try context.makeRegistry(parameters: [providerID: parameters])
            let coordinator = SigningCoordinator(registry: registry, journal: journal)
            let identity = try await coordinator.identity(for: providerID, parameters: parameters)
            let provider = try await coordinator.provider(providerID)
            guard let route = ApprovalRoute.of(provider, identity: identity, requiringWait: false) else {
                throw CertificateProviderError.unsupportedOperation(
                    "provider '\(providerID)' cannot ask about operations that wait for an approval"
                )
            }
            return ApprovalResumer(providerID: providerID, registry: registry, route: route, coordinator: coordinator)
        }

        /// Asks about the operation `file` names (once, or for up to `waitTimeout` seconds) and, once
        /// approved, completes the signature: checked, written atomically, recorded in `journal`
        /// (a claim's journal; nil: the command's).
        /// - Returns: what was written and recorded, or nil while the operation still waits.
        /// - Throws: `.invalidParameter` when `file` names no operation or another provider's;
        ///   `.approvalDeclined`, `.approvalExpired`, `.timeout` (waited `waitTimeout` in vain); the
        ///   completion's errors.
        func finish(
            _ file: PendingFile,
            recordingIn journal: SignatureJournal? = nil,
            waitTimeout: Int = 0,
            options: CompleteOptions = CompleteOptions(),
            _ context: CommandContext
        ) async throws -> CompletedSignature? {
            guard let remote = file.completion.remote else {
                throw CertificateProviderError.invalidParameter(
                    "pending \(file.pending.id) waits for no provider: complete it with 'certsign complete … "
                        + "--signature-value FILE'"
                )
            }
            guard remote.providerID == providerID else {
                throw CertificateProviderError.invalidParameter(
                    "operation \(remote.operationID) was started by provider '\(remote.providerID)', not '\(providerID)'"
                )
            }
            let answer: PendingSignatureAnswer
            if waitTimeout > 0 {
                answer = try await route.waitForAnswer(
                    remote,
                    timeout: .seconds(waitTimeout),
                    progress: approvalProgress(context.console, operationID: remote.operationID)
                )
            } else {
                guard let answered = try await route.answer(of: remote) else { return nil }
                answer = answered
            }
            let coordinator = journal.map { SigningCoordinator(registry: registry, journal: $0) } ?? coordinator
            return try await completeOne(file, answer: answer, provider: providerID, options, coordinator, context)
        }

        /// ``finish(_:recordingIn:waitTimeout:options:_:)`` inside a claim of the journal's queue: the
        /// outcome the queue keeps (completed, declined, expired, still waiting, failed) and what
        /// happened.
        func attempt(
            _ claim: PendingWorkClaim,
            retryAfter: Duration,
            waitTimeout: Int = 0,
            options: CompleteOptions,
            _ context: CommandContext
        ) async -> (PendingWorkOutcome, Result<CompletedSignature?, CertificateProviderError>) {
            do {
                let file = try PendingFile(jsonBytes: claim.item.payload)
                guard
                    let done = try await finish(
                        file,
                        recordingIn: claim.journal,
                        waitTimeout: waitTimeout,
                        options: options,
                        context
                    )
                else { return (.waiting(retryAfter: retryAfter), .success(nil)) }
                return (.completed, .success(done))
            } catch let error as CertificateProviderError {
                switch error.code {
                case .approvalDeclined: return (.declined(reason: error.reason), .failure(error))
                case .approvalExpired: return (.expired(reason: error.reason), .failure(error))
                default: return (.failed(reason: error.reason, retryAfter: retryAfter), .failure(error))
                }
            } catch {
                let wrapped = CertificateProviderError(.cryptoFailure, "pending \(claim.item.id): \(error)")
                return (.failed(reason: wrapped.reason, retryAfter: retryAfter), .failure(wrapped))
            }
        }

        /// Finishes `file` as `pending resume` does: through a claim of its item when the journal's
        /// queue has one (so a worker never finishes it as well), else directly.
        /// - Returns: what was written and recorded.
        /// - Throws: `.timeout` naming the operation while it still waits; the item's final-state
        ///   error (completed by a worker, cancelled); what ``finish(_:recordingIn:waitTimeout:options:_:)``
        ///   throws.
        func resume(
            _ file: PendingFile,
            waitTimeout: Int,
            _ context: CommandContext
        ) async throws
            -> CompletedSignature
        {
            let journal = coordinator.journal
            let done: CompletedSignature?
            if try await journal.pendingWorkItem(id: file.pending.id) != nil {
                let result = Mutex<Result<CompletedSignature?, CertificateProviderError>>(.success(nil))
                _ = try await journal.claimPendingWork(id: file.pending.id) { claim in
                    let (outcome, happened) = await attempt(
                        claim,
                        retryAfter: .zero,
                        waitTimeout: waitTimeout,
                        options: CompleteOptions(),
                        context
                    )
                    result.withLock { $0 = happened }
                    return outcome
                }
                done = try result.withLock { $0 }.get()
            } else {
                done = try await finish(file, waitTimeout: waitTimeout, context)
            }
            guard let done else {
                throw CertificateProviderError(
                    .timeout,
                    "operation \(file.completion.remote?.operationID ?? file.pending.id) still waits for approval; "
                        + "nothing was written. Run this again once it is approved, or add --wait-timeout SECONDS"
                )
            }
            return done
        }
    }
}
