import CertificateProviders
import Foundation

/// The queue of pending work: signatures prepared or waiting for a person's approval, kept in the
/// journal with their state so that any process sharing the journal finishes each exactly once.
///
/// Workers take items with ``claimPendingWork(id:in:_:)``: the item is locked in a transaction held
/// while it is worked on (PostgreSQL: `SELECT … FOR UPDATE SKIP LOCKED`, so several workers take
/// different items at once; SQLite: the write lock, one claim at a time), and the item's new state
/// commits in the same transaction as the signature record appended through the claim's journal.
/// A worker killed while it holds an item loses its connection, the database rolls the transaction
/// back, and the item is open again for the next worker. Claims run on a connection of their own
/// (a journal in memory has one connection: its claims run on it, one at a time).
extension SignatureJournal {
    /// Queues `items` in one transaction, all or none.
    /// - Throws: `.alreadyExists` naming the ID when an item with one of the IDs is queued already;
    ///   `.invalidParameter` for an item whose state is not open (``PendingWorkState/isOpen``); the
    ///   journal's store errors.
    public func enqueuePendingWork(_ items: [PendingWorkItem]) throws {
        if let closed = items.first(where: { !$0.state.isOpen }) {
            throw CertificateProviderError.invalidParameter(
                "pending item \(closed.id) cannot be queued as \(closed.state.rawValue): queue it prepared or "
                    + "waitingForApproval"
            )
        }
        guard !items.isEmpty else { return }
        try chainBackend.enqueuePendingWork(items)
    }

    /// The queued items in `states` (every item when nil), oldest first.
    public func pendingWork(in states: Set<PendingWorkState>? = nil) throws -> [PendingWorkItem] {
        try chainBackend.pendingWork(in: states)
    }

    /// The queued item with `id`, or nil.
    public func pendingWorkItem(id: String) throws -> PendingWorkItem? {
        try chainBackend.pendingWorkItem(id: id)
    }

    /// Cancels the open item `id`: it becomes ``PendingWorkState/cancelled`` and no worker takes it
    /// again. When a worker holds it, this waits for the worker's claim to end.
    /// - Returns: the cancelled item.
    /// - Throws: `.notStored` naming the ID when there is no such item; `.pendingWorkCompleted`,
    ///   `.pendingWorkCancelled` or `.pendingWorkClosed` naming it when it is final already.
    @discardableResult
    public func cancelPendingWork(id: String) throws -> PendingWorkItem {
        try chainBackend.cancelPendingWork(id: id, at: Date())
    }

    /// Completes the open item `id` with `records`: they are appended and the item becomes
    /// ``PendingWorkState/completed`` in one transaction (waiting for a worker that holds the item).
    /// - Returns: the completed item.
    /// - Throws: `.notStored` naming the ID when there is no such item; `.pendingWorkCompleted` when
    ///   it was completed already (nothing is appended), `.pendingWorkCancelled`, `.pendingWorkClosed`;
    ///   the errors of ``append(contentsOf:)``.
    @discardableResult
    public func completePendingWork(
        id: String,
        recording records: [SignatureRecord]
    ) async throws
        -> PendingWorkItem
    {
        let finished = try await claimPendingWork(id: id, in: [.prepared, .waitingForApproval]) { claim in
            try await claim.journal.append(contentsOf: records)
            return .completed
        }
        guard let finished else { throw PendingWorkItem.unknown(id) }
        return finished
    }

    /// Takes one item, runs `work` on it while holding it, and writes the outcome.
    ///
    /// The item is held in a transaction from the moment it is taken until the outcome is written:
    /// no other claim takes it meanwhile, and records appended through ``PendingWorkClaim/journal``
    /// commit with the outcome (``PendingWorkOutcome/completed`` makes it final), so an item is
    /// completed exactly once. When `work` throws, the transaction is rolled back (the item and the
    /// chain as before, the item open for the next claim) and the error is rethrown; a process
    /// killed meanwhile has the same effect.
    ///
    /// - Parameters:
    ///   - id: the item to take (waiting while another claim holds it); nil takes the open item in
    ///     `states` that is due (its `notBefore` passed) the longest and that no other claim holds.
    ///   - states: the open states to take (default: those waiting for a provider's approval).
    ///   - work: what to do with the item; returns how it ended.
    /// - Returns: the item as written, or nil when `id` is nil and no item is due.
    /// - Throws: for an `id`, `.notStored` when there is no such item and the item's final-state
    ///   error (`.pendingWorkCompleted`, `.pendingWorkCancelled`, `.pendingWorkClosed`); what `work`
    ///   throws; the journal's store errors.
    public func claimPendingWork(
        id: String? = nil,
        in states: Set<PendingWorkState> = PendingWorkState.awaitingProvider,
        _ work: @Sendable (PendingWorkClaim) async throws -> PendingWorkOutcome
    ) async throws -> PendingWorkItem? {
        let claimJournal = try takeClaimJournal()
        let item: PendingWorkItem?
        do {
            item = try await claimJournal.openClaim(id: id, in: states)
        } catch {
            giveBack(claimJournal, reusable: (error as? CertificateProviderError)?.code != .network)
            throw error
        }
        guard let item else {
            giveBack(claimJournal, reusable: true)
            return nil
        }
        let outcome: PendingWorkOutcome
        do {
            outcome = try await work(PendingWorkClaim(item: item, journal: claimJournal))
        } catch {
            await claimJournal.rollBackClaim()
            giveBack(claimJournal, reusable: true)
            throw error
        }
        let finished = item.applying(outcome, at: Date())
        do {
            try await claimJournal.commitClaim(writing: finished)
        } catch {
            giveBack(claimJournal, reusable: false)
            throw error
        }
        giveBack(claimJournal, reusable: true)
        return finished
    }

    // MARK: Claims

    /// A journal on a connection of its own for one claim: an idle one, or a new one.
    private func takeClaimJournal() throws -> SignatureJournal {
        guard let reopen else { return self }
        if let idle = idleClaimJournals.popLast() { return idle }
        return try reopen()
    }

    /// Keeps `journal` for the next claim (unless it is this one, or its connection may be broken).
    private func giveBack(_ journal: SignatureJournal, reusable: Bool) {
        guard journal !== self, reusable else { return }
        idleClaimJournals.append(journal)
    }

    /// Opens a claim on this journal's connection.
    private func openClaim(id: String?, in states: Set<PendingWorkState>) throws -> PendingWorkItem? {
        guard !claimIsOpen else {
            throw CertificateProviderError.unsupportedOperation(
                "a journal in memory holds one claim of pending work at a time"
            )
        }
        let item = try chainBackend.beginClaim(id: id, in: states, now: Date())
        claimIsOpen = item != nil
        return item
    }

    /// Writes the claimed item's outcome and commits the claim.
    private func commitClaim(writing item: PendingWorkItem) throws {
        defer { claimIsOpen = false }
        do {
            try chainBackend.endClaim(writing: item)
        } catch {
            chainBackend.abandonClaim()
            throw error
        }
    }

    /// Rolls the claim back.
    private func rollBackClaim() {
        chainBackend.abandonClaim()
        claimIsOpen = false
    }
}

extension PendingWorkItem {
    /// The item after `outcome`, at `date`.
    func applying(_ outcome: PendingWorkOutcome, at date: Date) -> PendingWorkItem {
        var item = self
        item.updatedAt = date
        switch outcome {
        case .completed:
            item.state = .completed
            item.lastError = nil
        case .declined(let reason):
            item.state = .declined
            item.lastError = reason
        case .expired(let reason):
            item.state = .expired
            item.lastError = reason
        case .waiting(let retryAfter):
            item.attempts += 1
            item.notBefore = date.addingTimeInterval(retryAfter.timeInterval)
        case .failed(let reason, let retryAfter):
            item.attempts += 1
            item.lastError = reason
            item.notBefore = date.addingTimeInterval(retryAfter.timeInterval)
        }
        return item
    }
}

extension Duration {
    /// In seconds.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
