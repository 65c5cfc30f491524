import CertificateProviders
public import Foundation

/// One signature waiting in the journal's queue of pending work: what `certsign prepare` or
/// `certsign sign --no-wait` left to finish, kept with the signature records so that any process
/// on any machine sharing the journal can finish it (``SignatureJournal/claimPendingWork(id:in:_:)``).
public struct PendingWorkItem: Sendable, Hashable, Codable {
    /// The pending signature's ID (the `.pending` file's ID).
    public var id: String
    /// Where the item stands.
    public var state: PendingWorkState
    /// Everything needed to finish the signature, as the application wrote it (for certsign, the
    /// `.pending` file's JSON, with the remote operation that waits for an approval); the journal
    /// stores it and never reads it.
    public var payload: Data
    /// Where the finished signature goes (a `.p7s` file or a signed PDF), if decided when it was
    /// queued.
    public var outputPath: String?
    /// When it was queued.
    public var createdAt: Date
    /// When its state, attempts or last error last changed.
    public var updatedAt: Date
    /// How many times a worker took it and had to leave it unfinished (still waiting, or failed).
    public var attempts: Int
    /// Why the last attempt did not finish it (or why it was declined or expired); nil when none.
    public var lastError: String?
    /// The earliest time a worker takes it again (a still-waiting item is left alone for the poll
    /// interval).
    public var notBefore: Date

    /// An item to queue with ``SignatureJournal/enqueuePendingWork(_:)``.
    /// - Parameters:
    ///   - id: the pending signature's ID (unique in the queue).
    ///   - state: ``PendingWorkState/prepared`` (waits for a value from elsewhere) or
    ///     ``PendingWorkState/waitingForApproval`` (waits for a provider's operation).
    ///   - payload: everything needed to finish it.
    ///   - outputPath: where the signature goes, if known.
    ///   - createdAt: when it was queued (default now).
    public init(
        id: String,
        state: PendingWorkState,
        payload: Data,
        outputPath: String? = nil,
        createdAt: Date = Date()
    ) {
        self.id = id
        self.state = state
        self.payload = payload
        self.outputPath = outputPath
        self.createdAt = createdAt
        updatedAt = createdAt
        attempts = 0
        lastError = nil
        notBefore = createdAt
    }
}

/// Where a ``PendingWorkItem`` stands. The open states are ``prepared`` and ``waitingForApproval``;
/// the others are final: a final item is never taken again and never changes.
public enum PendingWorkState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Prepared; the signature value comes from elsewhere (an outside signer).
    case prepared
    /// A provider's operation waits for a person's approval.
    case waitingForApproval
    /// Finished: its signature record was appended in the same transaction.
    case completed
    /// The person declined the operation: nothing was signed.
    case declined
    /// The operation expired before anyone approved it: nothing was signed.
    case expired
    /// Cancelled by a user: a value made for it later completes nothing.
    case cancelled

    /// Whether an item in this state may still be finished or cancelled.
    public var isOpen: Bool { self == .prepared || self == .waitingForApproval }

    /// The states a worker takes by default: those waiting for a provider.
    public static let awaitingProvider: Set<PendingWorkState> = [.waitingForApproval]
}

/// How the work on a claimed item ended (what the closure of
/// ``SignatureJournal/claimPendingWork(id:in:_:)`` returns); the claim writes it in the same
/// transaction as the signature records appended through ``PendingWorkClaim/journal``.
public enum PendingWorkOutcome: Sendable, Equatable {
    /// Finished: the item becomes ``PendingWorkState/completed`` and the records appended through
    /// the claim's journal commit with it.
    case completed
    /// The person declined: the item becomes ``PendingWorkState/declined`` with `reason`.
    case declined(reason: String)
    /// The operation expired: the item becomes ``PendingWorkState/expired`` with `reason`.
    case expired(reason: String)
    /// Still waiting: the item stays open, one more attempt counted, and no worker takes it before
    /// `retryAfter` has passed.
    case waiting(retryAfter: Duration)
    /// This attempt failed (a network error, say): as ``waiting(retryAfter:)``, with `reason` kept as
    /// the last error.
    case failed(reason: String, retryAfter: Duration)
}

/// One item a worker holds: nobody else takes it until the claim ends.
public struct PendingWorkClaim: Sendable {
    /// The item as it was when taken.
    public let item: PendingWorkItem
    /// The journal to record the item's signature in: its appends join the claim's transaction and
    /// commit with the item's new state, or not at all.
    public let journal: SignatureJournal
}

extension CertificateProviderError.Code {
    /// A pending item was completed already: it is never completed twice.
    public static let pendingWorkCompleted = Self("pendingWorkCompleted")
    /// A pending item was cancelled: nothing may complete it.
    public static let pendingWorkCancelled = Self("pendingWorkCancelled")
    /// A pending item was declined or expired: start the signature again.
    public static let pendingWorkClosed = Self("pendingWorkClosed")
}

extension PendingWorkItem {
    /// The error for finishing or cancelling this item in a final state, naming it.
    /// Marks an open item cancelled at `date`.
    /// - Throws: ``finalStateError`` when it is closed already (completed, declined, expired,
    ///   cancelled).
    package mutating func cancel(at date: Date) throws {
        guard state.isOpen else { throw finalStateError }
        state = .cancelled
        updatedAt = date
    }

    package var finalStateError: CertificateProviderError {
        switch state {
        case .completed:
            return CertificateProviderError(
                .pendingWorkCompleted,
                "pending item \(id) was completed already\(outputPath.map { " (\($0))" } ?? ""); it is never "
                    + "completed twice"
            )
        case .cancelled:
            return CertificateProviderError(
                .pendingWorkCancelled,
                "pending item \(id) was cancelled; nothing completes it"
            )
        default:
            return CertificateProviderError(
                .pendingWorkClosed,
                "pending item \(id) was \(state.rawValue)\(lastError.map { " (\($0))" } ?? ""); sign the document "
                    + "again"
            )
        }
    }

    /// The error for an ID the queue does not have.
    package static func unknown(_ id: String) -> CertificateProviderError {
        CertificateProviderError(.notStored, "the journal's queue has no pending item with id \(id)")
    }

    /// The error of an enqueue whose id the queue holds already (nothing was queued).
    package static func duplicate(_ id: String) -> CertificateProviderError {
        CertificateProviderError(
            .alreadyExists,
            "the journal's queue has a pending item with id \(id) already; nothing was queued"
        )
    }
}
