import CertificateProviders
import Foundation
import Signing

/// `certsign pending list | show ID | cancel ID`: the `.pending` files `certsign prepare` wrote in a
/// directory.
extension Commands {
    /// `certsign pending list [--dir DIR]`.
    struct PendingOptions: CommandOptions {
        var directory = "."

        static var options: [OptionBinding<Self>] { [pendingDirectoryOption(\.directory)] }
    }

    /// `certsign pending show|cancel ID [--dir DIR]`.
    struct PendingIDOptions: CommandOptions {
        var id = ""
        var directory = "."

        static var arguments: [ArgumentBinding<Self>] { [pendingIDArgument(\.id)] }

        static var options: [OptionBinding<Self>] { [pendingDirectoryOption(\.directory)] }
    }

    /// The `ID` argument of the `pending` commands: a pending signature's id, or a prefix of it.
    static func pendingIDArgument<Options: CommandOptions>(
        _ keyPath: WritableKeyPath<Options, String>
    ) -> ArgumentBinding<Options> {
        .one(keyPath, "ID", "a pending signature's id, or a prefix of it that only it starts with") {
            guard !$0.isEmpty, !$0.contains(where: \.isWhitespace) else {
                throw InvalidValue(message: "the pending id is empty ('certsign pending list' prints the ids)")
            }
            return $0.lowercased()
        }
    }

    /// `--dir DIR` of the `pending` commands.
    static func pendingDirectoryOption<Options: CommandOptions>(
        _ keyPath: WritableKeyPath<Options, String>
    ) -> OptionBinding<Options> {
        .value(
            keyPath,
            "--dir",
            "DIR",
            "the directory whose .pending files are meant (certsign prepare --out-dir, else beside the\n"
                + "documents)",
            type: .directory,
            default: "the current directory"
        )
    }

    static let pendingList = CommandDescriptor(
        words: ["pending", "list"],
        summary: "list the pending signatures (.pending files) of a directory",
        discussion: """
            One line per .pending file of the directory (not its subdirectories): the id, the document, the
            format, the digest and scheme the value must be made with, and when it was prepared. A file that is
            not a pending signature is reported on standard error, and the exit code is then 1. With a journal
            named (--journal URL or CERTSIGN_JOURNAL), the journal's queue is listed instead: every item sign
            --no-wait and prepare queued there, with its state (show and cancel then work on the queue too).
            """,
        examples: [
            "certsign pending list", "certsign pending list --dir ~/to-sign",
            "certsign pending list --journal postgresql://signer@db.example/journal",
        ]
    ) { (options: PendingOptions, context) in
        if let queue = try namedQueueJournal(context) { return try await listQueue(queue, context) }
        let (found, unreadable) = try pendingFiles(in: options.directory, context)
        for (path, error) in unreadable {
            context.console.err(ErrorText.documentFailure(path, error, command: context.command))
        }
        context.emit(
            encoding: PendingListDocument(
                pending: found.map { PendingEntryDocument($0.path, $0.file) },
                unreadable: unreadable.map { .init(file: Format.path($0.path), error: $0.error.reason) }
            ),
            human: found.isEmpty
                ? "no pending signatures in \(Format.printable(Format.path(options.directory)))"
                : Format.table(
                    ["ID", "DOCUMENT", "FORMAT", "ALGORITHM", "CREATED"],
                    found.map { entry in
                        let pending = entry.file.pending
                        return [
                            pending.id, Format.printable(entry.file.completion.document), pending.format.rawValue,
                            "\(pending.digestAlgorithm.rawValue) \(pending.scheme.rawValue)",
                            Format.localDate(pending.created),
                        ]
                    }
                )
        )
        return unreadable.isEmpty ? CertSign.exitSuccess : CertSign.exitFailure
    }

    static let pendingShow = CommandDescriptor(
        words: ["pending", "show"],
        summary: "show one pending signature: its document, level, signer and what to sign",
        examples: ["certsign pending show 749e2a45"]
    ) { (arguments: PendingIDOptions, context) in
        if let queue = try namedQueueJournal(context) { return try await showQueueItem(arguments.id, queue, context) }
        let (path, file) = try pendingFile(id: arguments.id, in: arguments.directory, context)
        let document = PendingEntryDocument(path, file)
        context.emit(encoding: document, human: document.humanText)
        return CertSign.exitSuccess
    }

    static let pendingCancel = CommandDescriptor(
        words: ["pending", "cancel"],
        summary: "cancel a pending signature: its .pending file is removed",
        discussion: """
            The .pending file is all that prepare leaves (a PDF's prepared update is inside it; the PDF was not
            touched), so removing it cancels the signature: a value made for it later completes nothing. With a
            journal named (--journal URL), the queue's item is marked cancelled instead (no worker takes it; a
            completed, declined or expired item is refused, exit 1).
            """,
        examples: ["certsign pending cancel 749e2a45"]
    ) { (arguments: PendingIDOptions, context) in
        if let queue = try namedQueueJournal(context) { return try await cancelQueueItem(arguments.id, queue, context) }
        let (path, file) = try pendingFile(id: arguments.id, in: arguments.directory, context)
        try removePendingFile(path)
        context.emit(
            encoding: PendingCancelDocument(cancelled: file.pending.id, file: Format.path(path)),
            human: "cancelled \(file.pending.id) (\(Format.printable(Format.path(path))) removed)"
        )
        return CertSign.exitSuccess
    }

    /// Every `.pending` file of `directory`, read, by creation time; and those that cannot be read.
    /// - Throws: `.fileSystem` when the directory cannot be listed.
    static func pendingFiles(
        in directory: String,
        _ context: CommandContext
    ) throws -> (
        found: [(path: String, file: PendingFile)], unreadable: [(path: String, error: CertificateProviderError)]
    ) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw CertificateProviderError(.fileSystem, "the directory \(directory) cannot be listed (--dir)")
        }
        var found: [(path: String, file: PendingFile)] = []
        var unreadable: [(path: String, error: CertificateProviderError)] = []
        for name in names.sorted() where name.hasSuffix(PendingFile.suffix) {
            let path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
            do {
                found.append((path, try PendingFile(contentsOf: path, context: context)))
            } catch let error as CertificateProviderError {
                unreadable.append((path, error))
            }
        }
        found.sort { $0.file.pending.created < $1.file.pending.created }
        return (found, unreadable)
    }

    /// The pending file of `directory` whose id is, or starts with, `id`.
    /// - Throws: `.notStored` when none is; `.invalidParameter` when the prefix fits several.
    static func pendingFile(
        id: String,
        in directory: String,
        _ context: CommandContext
    ) throws -> (path: String, file: PendingFile) {
        try pendingFiles(in: directory, context).found.onlyElement(
            withIDPrefix: id,
            id: { $0.file.pending.id },
            kind: "pending signature",
            place: "in \(Format.path(directory))"
        )
    }
}
