import CertificateProviders
import Foundation
import Signing

/// `certsign pending resume ID --provider ID --param …`: finishes a signature `sign --no-wait` left
/// waiting for a person's approval, in this process or any later one: the provider's key asks its
/// service about the operation the `.pending` file names; once approved the signature is written,
/// recorded and the pending file removed.
extension Commands {
    struct PendingResumeOptions: CommandOptions {
        var id = ""
        var directory = "."
        var provider: ProviderID?
        var parameters = ProviderParameterInput()
        var waitTimeout = 0

        static var arguments: [ArgumentBinding<Self>] { [pendingIDArgument(\.id)] }

        static var options: [OptionBinding<Self>] {
            var options: [OptionBinding<Self>] = [
                pendingDirectoryOption(\.directory),
                .value(
                    \.provider,
                    "--provider",
                    "ID",
                    "the provider that started the operation (default: the one the pending file names)"
                ) { ProviderID($0) },
                .integer(
                    \.waitTimeout,
                    "--wait-timeout",
                    "SECONDS",
                    "wait up to SECONDS for the approval (default 0: ask once)",
                    in: 0...86_400,
                    default: .initial
                ) { $0 },
            ]
            options += .providerParameters(\.parameters)
            return options
        }
    }

    static let pendingResume = CommandDescriptor(
        words: ["pending", "resume"],
        summary: "finish a signature that waited for a person's approval (sign --no-wait)",
        discussion: """
            The provider is opened with --param, --param-env and --param-file as 'sign' opens it, and asked about
            the operation the pending file names (a CSC operation, a CryptoPro DSS transaction). Approved: the
            answer (the key's value, or the CMS the server built) is checked against the prepared document and
            certificate, the signature written beside the document, recorded in the journal under the provider
            and the pending file removed. Still waiting, declined or expired: exit 1 with the operation ID,
            nothing written, the pending file kept; a declined or expired one is marked so ('certsign pending
            show ID'), and 'certsign pending cancel ID' removes it.
            """,
        examples: [
            "certsign pending resume 749e2a45 --param url=https://csc.example --param-env clientSecret=CSC_SECRET"
        ]
    ) { (options: PendingResumeOptions, context) in
        try await runPendingResume(options, context)
    }

    private static func runPendingResume(
        _ options: PendingResumeOptions,
        _ context: CommandContext
    ) async throws
        -> Int32
    {
        let (path, file) = try pendingFile(id: options.id, in: options.directory, context)
        guard let remote = file.completion.remote else {
            throw CertificateProviderError.invalidParameter(
                "pending \(file.pending.id) waits for no provider: complete it with 'certsign complete \(path) "
                    + "--signature-value FILE'"
            )
        }
        let providerID = options.provider ?? remote.providerID
        guard providerID == remote.providerID else {
            throw CertificateProviderError.invalidParameter(
                "operation \(remote.operationID) was started by provider '\(remote.providerID)', not '\(providerID)'"
            )
        }
        let resumer = try await ApprovalResumer.open(
            providerID,
            options.parameters,
            journal: try context.openJournal(),
            context
        )
        let result: CompletedSignature
        do {
            result = try await resumer.resume(file, waitTimeout: options.waitTimeout, context)
        } catch let error as CertificateProviderError where [.approvalDeclined, .approvalExpired].contains(error.code) {
            try markPendingFile(path, file, outcome: error.code)
            throw error
        }
        try removePendingFile(path)
        let document = CompletedDocument(completed: path, file, result)
        context.emit(
            encoding: document,
            human: "completed \(Format.printable(path)) -> \(Format.printable(result.output)) (approved operation "
                + "\(remote.operationID))"
        )
        return CertSign.exitSuccess
    }
}
