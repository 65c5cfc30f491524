import BuiltInProviders
import CertificateProviders
import Foundation
import HTTPClient

/// The command table.
enum Commands {
    static let all: [CommandDescriptor] =
        [providers] + providerCommands + signingCommands + pendingSigningCommands + journalCommands + [csr]
        + timestampCommands + extendCommands + trustCommands
        + [emulator, emulatorWait, emulatorApprove, emulatorDecline]
        + sessionCommands + [demo] + documentationCommands

    /// The command list: each command's words (less the first `dropping`) and summary.
    static func listing(_ commands: [CommandDescriptor], dropping: Int = 0) -> String {
        Help.columns(commands.map { ($0.words.dropFirst(dropping).joined(separator: " "), $0.summary) })
    }

    /// The first words of every command (`sign`, `identity`, …), for suggestions.
    static var topLevelWords: [String] {
        var seen: [String] = []
        for command in all where !seen.contains(command.words[0]) { seen.append(command.words[0]) }
        return seen
    }

    /// The command named by the longest run of `words`, and how many words name it.
    static func find(_ words: [String]) -> (CommandDescriptor, Int)? {
        for length in stride(from: min(words.count, 3), through: 1, by: -1) {
            let candidate = Array(words.prefix(length))
            if let command = all.first(where: { $0.words == candidate }) { return (command, length) }
        }
        return nil
    }

    /// `certsign providers [--params ID]`.
    struct ProvidersOptions: CommandOptions {
        var parametersOf: ProviderID?

        static var options: [OptionBinding<Self>] {
            [
                .value(
                    \.parametersOf,
                    "--params",
                    "ID",
                    "list the parameters provider ID takes (--param KEY=VALUE), secret ones marked"
                ) { ProviderID($0) }
            ]
        }
    }

    static let providers = CommandDescriptor(
        words: ["providers"],
        summary: "list the registered certificate providers",
        examples: ["certsign providers", "certsign providers --params csc"]
    ) { (options: ProvidersOptions, context) in
        let registry = try context.makeRegistry()
        if let id = options.parametersOf {
            let table = try registry.parameterTable(id)
            let parameters = registry.registration(id)?.schema?.parameters ?? []
            context.emit(
                encoding: ProviderParametersDocument(
                    provider: id.rawValue,
                    parameters: parameters.map {
                        .init(
                            key: $0.key.rawValue,
                            type: $0.type.description,
                            secret: $0.isSecret,
                            default: $0.defaultValue ?? "",
                            description: $0.summary
                        )
                    }
                ),
                human: table
            )
            return CertSign.exitSuccess
        }
        let rows = registry.registrationsByID
        context.emit(
            encoding: ProvidersDocument(providers: rows.map { .init(id: $0.id.rawValue, description: $0.description) }),
            human: Format.table(["ID", "DESCRIPTION"], rows.map { [$0.id.rawValue, $0.description] })
        )
        return CertSign.exitSuccess
    }
}

extension CommandContext {
    /// How the remote providers' `clientIdentity` parameter is read: an identity kept in this
    /// invocation's store.
    var clientIdentityLookup: ClientIdentityLookup { BuiltInProviders.clientIdentityLookup(in: storeDirectory) }

    /// The providers this tool offers. Only the CLI decides what is registered.
    /// - Parameter parameters: per provider, what it starts with (a key source's parameters, or what
    ///   the caller gave with `--param`): the provider is made with them, so a stored session or
    ///   certificate is used only when it matches them.
    func makeRegistry(parameters: [ProviderID: ProviderParameters] = [:]) throws -> ProviderRegistry {
        var registry = ProviderRegistry()
        try BuiltInProviders.register(in: &registry, parameters: parameters, context: providerContext)
        return registry
    }

    /// Prints a library's warning on stderr.
    var warningPrinter: @Sendable (String) -> Void {
        let console = self.console
        return { console.err("certsign: warning: \($0)") }
    }

    /// What this invocation lends every provider: the store directory, the environment, the client
    /// identities of the store and the warning printer.
    var providerContext: ProviderContext {
        ProviderContext(
            storeDirectory: storeDirectory,
            environment: environment,
            clientIdentityLookup: clientIdentityLookup,
            warning: warningPrinter
        )
    }
}
