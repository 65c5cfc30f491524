import CertificateProviders
import Foundation
import SignatureJournal
import Signing
import Synchronization

/// `certsign worker --journal URL`: finishes the journal's queued signatures as their approvals
/// arrive. Any number of workers on any machines share one PostgreSQL journal: each item is taken
/// by one of them at a time and completed exactly once (see `SignatureJournal.claimPendingWork`).
extension Commands {
    struct WorkerOptions: CommandOptions {
        var parameters = ProviderParameterInput()
        var pollInterval = 5
        var untilEmpty = false
        var maxItems: Int?

        static var options: [OptionBinding<Self>] {
            var options: [OptionBinding<Self>] = [
                .integer(
                    \.pollInterval,
                    "--poll-interval",
                    "SECONDS",
                    "ask about an item still waiting for approval again after SECONDS; also the pause when no\n"
                        + "item is due",
                    in: 1...3600,
                    default: .initial
                ) { $0 },
                .flag(\.untilEmpty, "--until-empty", "stop once the queue has no item waiting for approval"),
                .integer(
                    \.maxItems,
                    "--max-items",
                    "N",
                    "stop after N items were finished (completed, declined or expired)",
                    in: 1...100_000_000
                ) { $0 },
            ]
            options += .providerParameters(\.parameters)
            return options
        }
    }

    static let worker = CommandDescriptor(
        words: ["worker"],
        storeUse: .readsJournal,
        summary: "finish the journal's queued signatures as their approvals arrive (sign --no-wait --journal)",
        discussion: """
            Takes one item at a time from the queue of the journal --journal (or CERTSIGN_JOURNAL) names and asks
            the provider that started its operation whether it was approved; the provider is opened with --param,
            --param-env and --param-file as 'sign' opens it. Approved: the signature is checked, written
            atomically (in the directory sign --no-wait chose for it), recorded in the journal and the item
            marked completed, all in one transaction. Declined or expired: the item is
            marked so. Still waiting: it is left for --poll-interval seconds. Several workers may share one
            PostgreSQL journal: each takes different items (FOR UPDATE SKIP LOCKED), each item is completed
            once, and the item of a worker that dies goes back to the queue. Progress goes to standard error;
            the summary to standard output (--json). SIGTERM or SIGINT finishes the current item, then stops
            (exit 0).
            """,
        examples: [
            "certsign worker --journal postgresql://signer@db.example/journal --param url=https://csc.example "
                + "--param-env clientSecret=CSC_SECRET",
            "certsign worker --journal sqlite:journal.sqlite --until-empty --poll-interval 2 --param url=https://csc.example "
                + "--param-file clientSecret=/etc/certsign/csc-secret",
        ]
    ) { (options: WorkerOptions, context) in
        try await runWorker(options, context)
    }

    private static func runWorker(_ options: WorkerOptions, _ context: CommandContext) async throws -> Int32 {
        guard let journal = try namedQueueJournal(context) else {
            throw CertificateProviderError.invalidParameter(
                "certsign worker needs the journal whose queue it works on: --journal postgresql://… or "
                    + "--journal sqlite:PATH (or CERTSIGN_JOURNAL)"
            )
        }
        let interrupt = SignInterrupt.install()
        defer { interrupt.restore() }
        let stop = WorkerStop()
        interrupt.onSignal { stop.request() }
        // Said once SIGTERM and SIGINT are taken, so a supervisor (or a test) knows from here on a
        // signal stops the worker after its current item instead of ending it at once.
        context.console.err(
            "certsign: worker on \(journal.location): waiting for approved items (SIGTERM or Ctrl-C stops it "
                + "after the current one)"
        )
        let resumers = ApprovalResumers(input: options.parameters, journal: journal, context: context)
        var summary = WorkerSummaryDocument()
        let poll = Duration.seconds(options.pollInterval)
        while !stop.isRequested {
            if let maxItems = options.maxItems, summary.finished >= maxItems {
                summary.stopped = "maxItems"
                break
            }
            let happened = Mutex<WorkerStep?>(nil)
            let item = try await journal.claimPendingWork { claim in
                let resumer = try await resumers.resumer(for: claim.item)
                let (outcome, result) = await resumer.attempt(
                    claim,
                    retryAfter: poll,
                    options: workerCompleteOptions(claim.item),
                    context
                )
                happened.withLock { $0 = WorkerStep(outcome: outcome, result: result) }
                return outcome
            }
            guard let item, let step = happened.withLock({ $0 }) else {
                if try await waitForDueItem(journal, options, stop) { continue }
                summary.stopped = "empty"
                break
            }
            summary.count(step.outcome)
            context.console.err(workerProgress(item, step))
        }
        if stop.isRequested { summary.stopped = "signal" }
        context.emit(encoding: summary, human: summary.humanText)
        return CertSign.exitSuccess
    }

    /// How the worker completes an item: into the directory of its output, replacing a file a
    /// worker that died before its commit left there (the claim proves no one completed the item).
    static func workerCompleteOptions(_ item: PendingWorkItem) -> CompleteOptions {
        var options = CompleteOptions()
        options.outputDirectory = item.outputPath.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
        options.force = true
        return options
    }

    /// Waits until an item is due, for at most the poll interval, in slices that notice a signal.
    /// - Returns: false when the worker should stop: `--until-empty` and no item waits any more.
    private static func waitForDueItem(
        _ journal: SignatureJournal,
        _ options: WorkerOptions,
        _ stop: WorkerStop
    ) async throws -> Bool {
        let open = try await journal.pendingWork(in: PendingWorkState.awaitingProvider)
        if open.isEmpty && options.untilEmpty { return false }
        let next = open.map(\.notBefore).min().map { $0.timeIntervalSinceNow } ?? Double(options.pollInterval)
        let deadline =
            ContinuousClock.now + .milliseconds(Int(1000 * min(max(next, 0.05), Double(options.pollInterval))))
        while ContinuousClock.now < deadline, !stop.isRequested {
            try? await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    /// The progress line of one item.
    private static func workerProgress(_ item: PendingWorkItem, _ step: WorkerStep) -> String {
        switch (step.outcome, step.result) {
        case (.completed, .success(let done?)):
            return "certsign: completed \(item.id) -> \(Format.printable(done.output))"
        case (.waiting, _):
            return "certsign: \(item.id) still waits for approval (attempt \(item.attempts))"
        case (_, .failure(let error)):
            return "certsign: \(item.id) \(item.state.rawValue): \(error.reason)"
        default:
            return "certsign: \(item.id) \(item.state.rawValue)"
        }
    }
}

/// What one claim did (the outcome the queue kept, and what happened).
struct WorkerStep: Sendable {
    var outcome: PendingWorkOutcome
    var result: Result<Commands.CompletedSignature?, CertificateProviderError>
}

/// Set by SIGTERM or SIGINT: the worker finishes the item it holds, then stops.
final class WorkerStop: Sendable {
    private let requested = Atomic<Bool>(false)
    func request() { requested.store(true, ordering: .relaxed) }
    var isRequested: Bool { requested.load(ordering: .relaxed) }
}

/// One opened provider per provider ID the queued items name (opened once, when first needed).
actor ApprovalResumers {
    private let input: ProviderParameterInput
    private let journal: SignatureJournal
    private let context: CommandContext
    private var opened: [ProviderID: Commands.ApprovalResumer] = [:]

    init(input: ProviderParameterInput, journal: SignatureJournal, context: CommandContext) {
        self.input = input
        self.journal = journal
        self.context = context
    }

    /// The resumer of the provider `item` waits for.
    /// - Throws: `.malformedInput` when the item is not a pending file's JSON; `.invalidParameter`
    ///   when it waits for no provider; the provider's errors (the worker stops: its configuration
    ///   is wrong for every item).
    func resumer(for item: PendingWorkItem) async throws -> Commands.ApprovalResumer {
        let file = try PendingFile(jsonBytes: item.payload)
        guard let providerID = file.completion.remote?.providerID else {
            throw CertificateProviderError.invalidParameter("pending item \(item.id) waits for no provider")
        }
        if let resumer = opened[providerID] { return resumer }
        let resumer = try await Commands.ApprovalResumer.open(providerID, input, journal: journal, context)
        opened[providerID] = resumer
        return resumer
    }
}

/// The summary of `certsign worker` (`--json`).
struct WorkerSummaryDocument: Encodable {
    var completed = 0
    var declined = 0
    var expired = 0
    var stillWaiting = 0
    var failed = 0
    /// Why the worker stopped: `empty` (--until-empty), `maxItems`, `signal`.
    var stopped = "signal"
    enum CodingKeys: String, CodingKey, CaseIterable {
        case completed, declined, expired, stillWaiting, failed, stopped
    }

    /// Items made final.
    var finished: Int { completed + declined + expired }

    mutating func count(_ outcome: PendingWorkOutcome) {
        switch outcome {
        case .completed: completed += 1
        case .declined: declined += 1
        case .expired: expired += 1
        case .waiting: stillWaiting += 1
        case .failed: failed += 1
        }
    }

    var humanText: String {
        "worker stopped (\(stopped)): \(completed) completed, \(declined) declined, \(expired) expired, "
            + "\(stillWaiting) still waiting, \(failed) failed attempts"
    }
}
