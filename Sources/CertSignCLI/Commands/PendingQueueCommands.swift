import CertificateProviders
import Foundation
import SignatureJournal
import Signing

/// The journal's queue of pending work as the `pending` commands see it with `--journal`: items
/// `sign --no-wait` and `prepare` queued there besides their `.pending` files.
extension Commands {
    /// The journal `--journal` or `CERTSIGN_JOURNAL` names, for its queue; nil when none is named
    /// (the `pending` commands then read `.pending` files, and nothing is queued).
    static func namedQueueJournal(_ context: CommandContext) throws -> SignatureJournal? {
        context.journalLocation == nil ? nil : try context.openJournal()
    }

    /// The queue item of a pending file: its JSON, waiting for the provider's approval when it names
    /// an operation, else prepared; the signature goes to `output` (else beside the document).
    static func queueItem(_ file: PendingFile, output: String?) throws -> PendingWorkItem {
        PendingWorkItem(
            id: file.pending.id,
            state: file.completion.remote == nil ? .prepared : .waitingForApproval,
            payload: Data(try file.jsonData()),
            outputPath: output ?? completionOutput(file, CompleteOptions()).path
        )
    }

    /// `pending list --journal URL`: every item of the queue, oldest first.
    static func listQueue(_ journal: SignatureJournal, _ context: CommandContext) async throws -> Int32 {
        let items = try await journal.pendingWork().map(QueueItemDocument.init)
        context.emit(
            encoding: QueueListDocument(items: items),
            human: items.isEmpty
                ? "no pending items in the journal \(journal.location)"
                : Format.table(
                    ["ID", "STATE", "DOCUMENT", "OPERATION", "ATTEMPTS", "UPDATED"],
                    items.map { item in
                        [
                            item.id, item.state, Format.printable(item.document ?? ""), item.operationID ?? "-",
                            "\(item.attempts)", Format.localDate(item.updatedAt),
                        ]
                    }
                )
        )
        return CertSign.exitSuccess
    }

    /// The queue's item whose ID is, or starts with, `id`.
    /// - Throws: `.notStored` naming the ID and the journal; `.invalidParameter` when the prefix fits
    ///   several.
    static func queueItem(id: String, in journal: SignatureJournal) async throws -> PendingWorkItem {
        try await journal.pendingWork().onlyElement(
            withIDPrefix: id,
            id: \.id,
            kind: "pending item",
            place: "in the journal \(journal.location)"
        )
    }

    /// `pending show ID --journal URL`.
    static func showQueueItem(
        _ id: String,
        _ journal: SignatureJournal,
        _ context: CommandContext
    ) async throws
        -> Int32
    {
        let document = QueueItemDocument(try await queueItem(id: id, in: journal))
        context.emit(encoding: document, human: document.humanText)
        return CertSign.exitSuccess
    }

    /// `pending cancel ID --journal URL`: the item becomes cancelled (its `.pending` file, if any, stays).
    static func cancelQueueItem(
        _ id: String,
        _ journal: SignatureJournal,
        _ context: CommandContext
    ) async throws
        -> Int32
    {
        let item = try await journal.cancelPendingWork(id: try await queueItem(id: id, in: journal).id)
        let document = QueueItemDocument(item)
        context.emit(encoding: document, human: "cancelled \(item.id) in the journal \(journal.location)")
        return CertSign.exitSuccess
    }
}

/// One item of the journal's queue (`pending list|show|cancel --journal`).
struct QueueItemDocument: Encodable {
    var id: String
    var state: String
    var document: String?
    var provider: String?
    var operationID: String?
    var output: String?
    var createdAt: Date
    var updatedAt: Date
    var attempts: Int
    var lastError: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, state, document, provider, operationID, output, createdAt, updatedAt, attempts, lastError
    }

    init(_ item: PendingWorkItem) {
        id = item.id
        state = item.state.rawValue
        let file = try? PendingFile(jsonBytes: item.payload)
        document = file.map { Format.path($0.completion.document) }
        provider = file?.completion.remote?.providerID.rawValue
        operationID = file?.completion.remote?.operationID
        output = item.outputPath.map(Format.path)
        createdAt = item.createdAt
        updatedAt = item.updatedAt
        attempts = item.attempts
        lastError = item.lastError
    }

    var humanText: String {
        [
            "id:         \(id)", "state:      \(state)", "document:   \(Format.printable(document ?? "-"))",
            "operation:  \(operationID.map { "\($0) (\(provider ?? ""))" } ?? "-")",
            "output:     \(Format.printable(output ?? "-"))", "created:    \(Format.localDate(createdAt))",
            "updated:    \(Format.localDate(updatedAt))", "attempts:   \(attempts)",
        ].joined(separator: "\n") + (lastError.map { "\nlast error: \($0)" } ?? "")
    }
}

/// `{"items": [...]}` of `pending list --journal`.
struct QueueListDocument: Encodable {
    var items: [QueueItemDocument]
    enum CodingKeys: String, CodingKey, CaseIterable { case items }
}
