import CertificateProviders
import Foundation
import SignatureJournal
import Signing
import Synchronization

/// `certsign sign` with a provider whose signatures wait for a person's approval (an
/// `ApprovalSigningKey` that `waitsForApproval`): each document is prepared here, its digest goes to
/// the service as one operation, and then either `--no-wait` writes a `.pending` file naming the
/// operation and returns at once (`certsign pending resume` finishes it), or `sign` waits with a
/// progress line on standard error until the operation is approved (then the signature is written),
/// declined, expired or `--wait-timeout` passes (exit 1, nothing written).
extension Commands {
    /// `sign --no-wait` and `sign --wait-timeout SECONDS`.
    struct ApprovalWaitArguments: Sendable, Equatable {
        /// Return the operation IDs at once instead of waiting.
        var noWait = false
        /// The longest wait for the approval, in seconds (nil: ``defaultWaitTimeout``).
        var waitTimeout: Int?
    }

    /// How long `sign` waits for an approval when `--wait-timeout` is not given.
    static let defaultWaitTimeout = 300

    /// The approval path of `sign`, or nil when the identity's key does not wait for approval.
    /// - Throws: `.invalidParameter` for `--no-wait` or `--wait-timeout` with a key that signs at once,
    ///   or for standard input or output; `.unsupportedOperation` for PAdES.
    static func signAwaitingApproval(_ run: SignRun) async throws -> Int32? {
        let approval = run.arguments.approval
        // Only a provider the coordinator can make can wait on its server; otherwise only the key can.
        let provider = try? await run.coordinator.provider(run.source.providerID)
        guard let route = ApprovalRoute.of(provider, identity: run.identity) else {
            if approval.noWait || approval.waitTimeout != nil {
                throw CertificateProviderError.invalidParameter(
                    "--no-wait and --wait-timeout go with a provider whose signatures wait for a person's approval; "
                        + "'\(run.source.providerID)' as configured signs at once"
                )
            }
            return nil
        }
        guard !run.plan.isPAdES else {
            // A server that builds the signature waits for the confirmation itself on the ordinary path.
            if case .server = route, !approval.noWait, approval.waitTimeout == nil { return nil }
            throw CertificateProviderError.unsupportedOperation(
                "PDF signatures that wait for an approval are not supported: sign with --format cades"
            )
        }
        let outputs = try run.plan.outputs.map { output -> URL in
            guard case .file(let url) = output else {
                throw CertificateProviderError.invalidParameter(
                    "a signature that waits for an approval goes to a file, not to standard output"
                )
            }
            return url
        }
        if run.plan.documents.contains("-") {
            throw CertificateProviderError.invalidParameter(
                "a signature that waits for an approval needs a document file, not standard input"
            )
        }
        if approval.noWait {
            // Refused before any operation starts: an operation nobody can resume helps nobody.
            for path in run.plan.documents {
                let pendingPath = pendingFilePath(for: path, directory: run.arguments.outputDirectory)
                if FileManager.default.fileExists(atPath: pendingPath) {
                    throw CertificateProviderError(
                        .alreadyExists,
                        "\(pendingPath) exists: resume it ('certsign pending resume ID') or cancel it ('certsign "
                            + "pending cancel ID') before signing this document again; nothing was started"
                    )
                }
            }
        }
        var started: [ApprovalOperationDocument] = []
        var prepared: [(PendingSignature, PendingRemoteSignature)] = []
        for path in run.plan.documents {
            let pending = try await run.coordinator.prepare(
                document: .file(URL(fileURLWithPath: path)),
                certificate: run.identity.certificate,
                chain: run.identity.chain,
                options: run.plan.options
            )
            let operation = try await route.start(pending, document: URL(fileURLWithPath: absolutePath(path)))
            prepared.append((pending, operation))
            started.append(ApprovalOperationDocument(document: Format.path(path), operation))
        }
        if approval.noWait {
            return try await writePendingOperations(run, prepared, started, outputs: outputs)
        }
        return try await waitForApprovals(run, route: route, prepared, outputs: outputs)
    }

    /// `--no-wait`: one `.pending` file per document (beside it, or in `--out-dir`), the IDs printed.
    private static func writePendingOperations(
        _ run: SignRun,
        _ prepared: [(PendingSignature, PendingRemoteSignature)],
        _ started: [ApprovalOperationDocument],
        outputs: [URL]
    ) async throws -> Int32 {
        let arguments = run.arguments
        var documents = started
        var queued: [PendingWorkItem] = []
        for (index, (pending, operation)) in prepared.enumerated() {
            let path = run.plan.documents[index]
            let file = PendingFile(
                pending: pending,
                completion: .init(
                    document: absolutePath(path),
                    level: (arguments.level ?? (arguments.tsa == nil ? .bB : .bT)).rawValue,
                    tsa: arguments.tsa?.absoluteString,
                    tsaCA: arguments.tsaCA.map(absolutePath),
                    ca: arguments.ca.map(absolutePath),
                    remote: operation,
                    output: outputs[index].standardizedFileURL.path
                )
            )
            let pendingPath = pendingFilePath(for: path, directory: arguments.outputDirectory)
            try file.write(to: pendingPath)
            documents[index].pendingFile = Format.path(pendingPath)
            documents[index].id = pending.id
            if case .file(let output) = run.plan.outputs[index] {
                queued.append(try queueItem(file, output: output.path))
            }
        }
        // With a journal named, the operations are queued there too, for `certsign worker`.
        if run.context.journalLocation != nil { try await run.coordinator.journal.enqueuePendingWork(queued) }
        run.context.emit(
            encoding: ApprovalOperationsDocument(waiting: documents),
            human: documents.map(\.humanText).joined(separator: "\n")
        )
        return CertSign.exitSuccess
    }

    /// Waits for every operation in turn, then writes and records each signature.
    private static func waitForApprovals(
        _ run: SignRun,
        route: ApprovalRoute,
        _ prepared: [(PendingSignature, PendingRemoteSignature)],
        outputs: [URL]
    ) async throws -> Int32 {
        let timeout = Duration.seconds(run.arguments.approval.waitTimeout ?? defaultWaitTimeout)
        var answers: [PendingSignatureAnswer] = []
        for (_, operation) in prepared {
            let console = run.context.console
            let id = operation.operationID
            console.err("certsign: waiting for the approval of operation \(id) (at most \(timeout))")
            answers.append(
                try await route.waitForAnswer(
                    operation,
                    timeout: timeout,
                    progress: approvalProgress(console, operationID: id)
                )
            )
        }
        // Every approval is in: only now is anything written.
        var signed: [ApprovalOperationDocument] = []
        for (index, (pending, operation)) in prepared.enumerated() {
            let result = try await run.coordinator.complete(
                pending,
                with: answers[index],
                document: pending.detached ? nil : .file(URL(fileURLWithPath: run.plan.documents[index])),
                provider: run.source.providerID,
                options: run.plan.options,
                output: outputs[index]
            )
            var document = ApprovalOperationDocument(document: Format.path(run.plan.documents[index]), operation)
            document.signature = Format.path(outputs[index].path)
            document.id = result.record.id
            signed.append(document)
            if !run.context.json {
                run.context.console.out(
                    "signed \(Format.printable(run.plan.documents[index])) -> \(Format.printable(outputs[index].path))"
                        + " (approved operation \(operation.operationID))"
                )
            }
        }
        if run.context.json { run.context.console.out(JSONOutput.encode(ApprovalOperationsDocument(signed: signed))) }
        return CertSign.exitSuccess
    }
}

extension Commands {
    /// The progress of a wait for an approval: a line on standard error each time another
    /// `seconds` have passed.
    static func approvalProgress(
        _ console: Console,
        operationID: String,
        every seconds: Int64 = 10
    ) -> @Sendable (Duration) -> Void {
        let mark = ApprovalProgressMark()
        return { waited in
            let elapsed = waited.components.seconds
            guard mark.advance(to: elapsed / seconds) else { return }
            console.err("certsign: operation \(operationID) still waits for approval (\(elapsed) s)")
        }
    }
}

/// The last progress step shown; one wait's progress calls come one after another, but from any
/// thread, so the step is atomic.
final class ApprovalProgressMark: Sendable {
    private let step = Atomic<Int64>(0)

    /// Whether `next` is a step not shown yet (then it is the one shown).
    func advance(to next: Int64) -> Bool {
        let shown = step.load(ordering: .relaxed)
        guard next > shown else { return false }
        return step.compareExchange(expected: shown, desired: next, ordering: .relaxed).exchanged
    }
}

/// `sign --json` with a provider that waits for an approval: `{"waiting": [...]}` with `--no-wait`,
/// else `{"signed": [...]}` once every operation was approved.
struct ApprovalOperationsDocument: Encodable {
    var waiting: [ApprovalOperationDocument]?
    var signed: [ApprovalOperationDocument]?
    enum CodingKeys: String, CodingKey, CaseIterable { case waiting, signed }
}

/// One document whose signature waits (or waited) for an approval.
struct ApprovalOperationDocument: Encodable {
    var document: String
    var provider: String
    var operationID: String
    var expiresAt: Date?
    /// `--no-wait`: the `.pending` file and its ID (for `certsign pending resume ID`).
    var pendingFile: String?
    var id: String?
    /// Once approved: the signature file.
    var signature: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case document, provider, operationID, expiresAt, pendingFile, id, signature
    }

    init(document: String, _ operation: PendingRemoteSignature) {
        self.document = document
        provider = operation.providerID.rawValue
        operationID = operation.operationID
        expiresAt = operation.expiresAt
    }

    var humanText: String {
        "\(Format.printable(document)): waiting for approval, operation \(operationID) (\(provider))"
            + (pendingFile.map { "; pending \(id ?? "") in \(Format.printable($0))" } ?? "")
    }
}

extension Commands.SignOptions {
    /// `--no-wait` and `--wait-timeout`, for providers whose signatures wait for an approval.
    static var approvalOptions: [OptionBinding<Self>] {
        [
            .flag(
                \.approval.noWait,
                "--no-wait",
                "with a provider that waits for a person's approval: print the operation IDs and write\n"
                    + "NAME.pending at once ('certsign pending resume ID' finishes it once approved)"
            ),
            .integer(
                \.approval.waitTimeout,
                "--wait-timeout",
                "SECONDS",
                "with a provider that waits for a person's approval: give up after SECONDS (exit 1,\n"
                    + "nothing written)",
                in: 1...86_400,
                default: .text("\(Commands.defaultWaitTimeout)")
            ) { $0 },
        ]
    }
}
