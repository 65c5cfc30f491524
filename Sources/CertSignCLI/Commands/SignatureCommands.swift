import CertificateProviders
import Foundation
import SignatureJournal
import SignatureJournalPostgres
import Signing

/// `certsign signatures list | remove`, and the journal the signing commands share.
extension Commands {
    /// `certsign signatures list [--local]`.
    struct SignaturesListOptions: CommandOptions {
        var local = false

        static var options: [OptionBinding<Self>] {
            [.flag(\.local, "--local", "the journal alone: ask no server for its signature history")]
        }
    }

    static let signaturesList = CommandDescriptor(
        words: ["signatures", "list"],
        storeUse: .readsJournal,
        summary: "list signatures: the local journal and server histories",
        discussion: """
            A server's history is asked for only when the store keeps a session with it ('certsign sessions \
            list'); a server that does not answer is one line on stderr, and --local asks none.
            """,
        examples: ["certsign --json signatures list", "certsign signatures list --local"]
    ) { (options: SignaturesListOptions, context) in
        let coordinator = SigningCoordinator(registry: try context.makeRegistry(), journal: try context.openJournal())
        let list = try await coordinator.signatures(historiesOf: options.local ? [] : providersWithSession(context))
        for (id, error) in list.unavailable.sorted(by: { $0.key < $1.key }) {
            if error.code == .network || error.code == .timeout {
                context.console.err(
                    "certsign: \(id): its server does not answer, so its history is left out (--local asks no "
                        + "server; 'certsign sessions clear \(id)' forgets the session)"
                )
            } else {
                context.console.err(
                    "certsign: warning: the signature history of '\(id)' is unavailable: \(error.reason)"
                )
            }
        }
        let entries = list.entries
        context.emit(
            encoding: SignaturesDocument(signatures: entries.map(SignatureEntryDocument.init)),
            human: entries.isEmpty
                ? "no signatures"
                : Format.table(
                    ["ID", "WHERE", "CREATED", "DOCUMENT", "SIGNER", "WORKER"],
                    entries.map {
                        [
                            $0.id, $0.location.description, $0.createdAt.map(Format.localDate) ?? "-", $0.summary,
                            $0.record?.signerSubject ?? "-", $0.record.map(Self.worker) ?? "-",
                        ]
                    }
                )
        )
        return CertSign.exitSuccess
    }

    /// `HOST:PID` of the worker that made a journal record (`-` for rows older than the chain).
    static func worker(_ record: SignatureRecord) -> String {
        record.workerHost.isEmpty ? "-" : "\(record.workerHost):\(record.workerProcessID)"
    }

    /// `certsign signatures remove ID`: a signature id or a prefix of one.
    struct SignaturesRemoveOptions: CommandOptions {
        var id = ""

        static var arguments: [ArgumentBinding<Self>] {
            [
                .one(
                    \.id,
                    "ID",
                    "the signature's id as 'certsign signatures list' prints it, or a unique prefix of it",
                    convert: ValueConversions.signatureID
                )
            ]
        }
    }

    static let signaturesRemove: CommandDescriptor = CommandDescriptor(
        words: ["signatures", "remove"],
        storeUse: .readsJournal,
        summary: "remove a signature record (journal row or server history entry)",
        discussion: "The journal row is removed; a .p7s file written earlier is left where it is.",
        examples: ["certsign signatures remove 0F1C"]
    ) { (options: SignaturesRemoveOptions, context) in
        let given = options.id
        let coordinator = SigningCoordinator(registry: try context.makeRegistry(), journal: try context.openJournal())
        let entries = try await coordinator.signatures(historiesOf: providersWithSession(context)).entries
        // The full id, else a unique prefix (as git takes abbreviated commits), case-insensitive.
        var matches = entries.filter { $0.id == given }
        if matches.isEmpty, !given.isEmpty {
            matches = entries.filter { $0.id.lowercased().hasPrefix(given.lowercased()) }
        }
        guard let entry = matches.first else {
            throw CertificateProviderError(.notStored, "no signature has the id \(given) or an id that starts with it")
        }
        let id = entry.id
        guard matches.allSatisfy({ $0.id == id }) else {
            throw UsageError(
                message: "the id prefix \(given) is ambiguous; it matches: "
                    + matches.map { "\($0.id) (\($0.location))" }.joined(separator: ", "),
                usage: signaturesRemove.usage
            )
        }
        guard matches.count == 1 else {
            throw CertificateProviderError.invalidParameter(
                "id \(id) exists in several places: \(matches.map(\.location.description).joined(separator: ", "))"
            )
        }
        try await coordinator.removeSignature(id: id, location: entry.location)
        context.emit(
            encoding: SignaturesDocument(removed: .init(id: id, location: entry.location.description)),
            human: "removed \(id) (\(entry.location))"
        )
        return CertSign.exitSuccess
    }
}

extension CommandContext {
    /// The signature journal `--journal` or `CERTSIGN_JOURNAL` names, else the one in the store
    /// directory (created on first use). With a journal named, the store's is never touched.
    func openJournal() throws -> SignatureJournal {
        if let journalLocation { return try SignatureJournal(opening: journalLocation) }
        do {
            try FileManager.default.createDirectory(
                at: storeDirectory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw CertificateProviderError(
                .fileSystem,
                "cannot create the store directory \(storeDirectory.path): \(error.localizedDescription)"
            )
        }
        return try SignatureJournal(url: storeDirectory.appendingPathComponent("journal.sqlite"))
    }

    /// The size of a document, with errors that say what is wrong with the path.
    func documentSize(_ path: String) throws -> Int64 { try checkReadableFile(path, what: "document") }
}
