import BuiltInProviders
import CertificateProviders

/// What the command line gave a provider's command (``ProviderCommand``): its value options and flags
/// by name, where each secret comes from, and the provider's parameters.
struct ProviderCommandValues: CommandOptions {
    /// Where each secret comes from, by stem (an option not given reads as not given).
    struct Secrets: Sendable, Equatable {
        var byStem: [String: SecretInput] = [:]

        subscript(stem: String) -> SecretInput {
            get { byStem[stem] ?? SecretInput() }
            set { byStem[stem] = newValue }
        }
    }

    var values: [String: String] = [:]
    var flags: Set<String> = []
    var secrets = Secrets()
    var parameters = ProviderParameterInput()
}

/// The commands the built-in providers add (``BuiltInProvider/commands``): the tool parses their
/// options, reads their secrets and prints their output, and names no provider itself.
extension Commands {
    static var providerCommands: [CommandDescriptor] {
        BuiltInProviders.all.flatMap { provider in provider.commands.map { descriptor($0, of: provider.id) } }
    }

    /// The command-line command for a provider's `command`.
    static func descriptor(_ command: ProviderCommand, of provider: ProviderID) -> CommandDescriptor {
        CommandDescriptor(
            words: command.words,
            summary: command.summary,
            discussion: command.discussion,
            examples: command.examples,
            options: { bindings(for: command) },
            run: { (given: ProviderCommandValues, context) in
                var secrets: [String: Secret] = [:]
                for (stem, input) in given.secrets.byStem {
                    if let secret = try context.optionalSecret(input) { secrets[stem] = secret }
                }
                let invocation = ProviderCommand.Invocation(
                    values: given.values,
                    flags: given.flags,
                    secrets: secrets,
                    parameters: command.takesParameters
                        ? try context.providerParameters(given.parameters, for: provider) : ProviderParameters(),
                    context: context.providerContext,
                    dateText: { Format.localDate($0) }
                )
                let output: ProviderCommand.Output
                do {
                    output = try await command.run(invocation)
                } catch let error as ProviderCommand.UsageError {
                    throw UsageError(message: error.message, usage: find(command.words)?.0.usage ?? "")
                }
                // The document's type is the provider's: opened here so the encoder sees it.
                func emit<Document: Encodable>(_ document: Document) {
                    context.emit(encoding: document, human: text(output.human))
                }
                emit(output.document)
                return CertSign.exitSuccess
            }
        )
    }

    /// What people read of a provider command's output.
    static func text(_ human: ProviderCommand.Output.Human) -> String {
        switch human {
        case .text(let text): text
        case .table(let headers, let rows, let whenEmpty): rows.isEmpty ? whenEmpty : Format.table(headers, rows)
        }
    }

    /// The options of `command`, bound to ``ProviderCommandValues``.
    static func bindings(for command: ProviderCommand) -> [OptionBinding<ProviderCommandValues>] {
        var bindings: [OptionBinding<ProviderCommandValues>] = []
        for option in command.options {
            let name = option.name
            let shown: DefaultShown = option.defaultText.map { .text($0) } ?? .none
            switch option.kind {
            case .value(let placeholder, let isFile):
                bindings.append(
                    .value(
                        \.values[name],
                        "--\(name)",
                        placeholder,
                        option.summary,
                        type: isFile ? .file : .text,
                        default: shown
                    )
                )
            case .flag:
                bindings.append(
                    OptionBinding(declaration: .flag("--\(name)", option.summary)) { values, _ in
                        values.flags.insert(name)
                    }
                )
            case .secret:
                bindings += .secretSources(\.secrets[name], name, option.summary, standardInput: true)
            }
        }
        if command.takesParameters { bindings += .providerParameters(\.parameters) }
        return bindings
    }
}
