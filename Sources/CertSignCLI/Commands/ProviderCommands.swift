import BuiltInProviders
import CertificateProviders

/// What the command line gave a provider's command (``ProviderCommand``): its value options, flags and
/// arguments, where each secret comes from, and the provider's parameters.
struct ProviderCommandValues: CommandOptions {
    /// Where each secret comes from, by stem (an option not given reads as not given).
    struct Secrets: Sendable, Equatable {
        var byStem: [String: SecretInput] = [:]

        subscript(stem: String) -> SecretInput {
            get { byStem[stem] ?? SecretInput(stem: stem) }
            set { byStem[stem] = newValue }
        }
    }

    var values: [String: String] = [:]
    var flags: Set<String> = []
    var arguments: [String] = []
    var secrets = Secrets()
    var parameters = ProviderParameterInput()
}

/// The commands the built-in providers add (``BuiltInProvider/commands``): the tool parses their
/// options, reads their secrets when they ask and prints their output, and names no provider itself.
extension Commands {
    static var providerCommands: [CommandDescriptor] {
        BuiltInProviders.all.flatMap { provider in provider.commands.map { descriptor($0, of: provider.id) } }
    }

    /// The command-line command for a provider's `command`.
    static func descriptor(_ command: ProviderCommand, of provider: ProviderID) -> CommandDescriptor {
        CommandDescriptor(
            words: command.words,
            storeUse: command.readsStore ? .reads : .mayCreate,
            summary: command.summary,
            discussion: command.discussion,
            examples: command.examples,
            options: { bindings(for: command) },
            arguments: { argumentBindings(for: command) },
            run: { (given: ProviderCommandValues, context) in
                try await run(command, of: provider, given, context)
            }
        )
    }

    /// Runs a provider's `command` with what the command line gave; prints its output (or, for a
    /// ``ProviderCommand/Failure`` with `--json`, its document before the error).
    static func run(
        _ command: ProviderCommand,
        of provider: ProviderID,
        _ given: ProviderCommandValues,
        _ context: CommandContext
    ) async throws -> Int32 {
        let console = context.console
        let confirm: (@Sendable (String) -> Bool)? =
            console.inputIsTerminal ? { @Sendable question in console.confirm(question) } : nil
        let invocation = ProviderCommand.Invocation(
            values: given.values,
            flags: given.flags,
            arguments: given.arguments,
            secretSources: given.secrets.byStem.compactMapValues { $0.source.map(\.providerSource) },
            secretReader: { request in try context.secret(request, given: given.secrets[request.name]) },
            parameters: command.takesParameters
                ? try context.providerParameters(given.parameters, for: provider) : ProviderParameters(),
            context: context.providerContext,
            dateText: { Format.localDate($0) },
            confirm: confirm
        )
        let output: ProviderCommand.Output
        do {
            output = try await command.run(invocation)
        } catch let error as ProviderCommand.UsageError {
            throw UsageError(message: error.message, usage: find(command.words)?.0.usage ?? "")
        } catch let failure as ProviderCommand.Failure {
            if context.json { console.out(JSONOutput.encode(encodable(failure.document))) }
            throw failure.error
        }
        context.emit(encoding: encodable(output.document), human: text(output.human))
        return CertSign.exitSuccess
    }

    /// A provider's document as a value the encoder sees whole (its type is the provider's).
    static func encodable(_ document: any Encodable & Sendable) -> AnyEncodableDocument {
        AnyEncodableDocument(document: document)
    }

    /// What people read of a provider command's output.
    static func text(_ human: ProviderCommand.Output.Human) -> String {
        switch human {
        case .text(let text): text
        case .table(let headers, let rows, let whenEmpty): rows.isEmpty ? whenEmpty : Format.table(headers, rows)
        }
    }

    /// The positional arguments of `command`, bound to ``ProviderCommandValues``.
    static func argumentBindings(for command: ProviderCommand) -> [ArgumentBinding<ProviderCommandValues>] {
        command.arguments.map { argument in
            ArgumentBinding(
                declaration: ArgumentDeclaration(
                    name: argument.name,
                    help: argument.summary,
                    valueType: argument.type.declared
                )
            ) {
                values,
                text in
                values.arguments.append(text)
            }
        }
    }

    /// The options of `command`, bound to ``ProviderCommandValues``.
    static func bindings(for command: ProviderCommand) -> [OptionBinding<ProviderCommandValues>] {
        var bindings: [OptionBinding<ProviderCommandValues>] = []
        for option in command.options {
            let name = option.name
            let shown: DefaultShown = option.defaultText.map { .text($0) } ?? .none
            switch option.kind {
            case .value(let placeholder, let type):
                bindings.append(
                    .value(
                        \.values[name],
                        "--\(name)",
                        placeholder,
                        option.summary,
                        type: type.declared,
                        required: option.isRequired,
                        default: shown
                    )
                )
            case .flag:
                bindings.append(
                    OptionBinding(declaration: .flag("--\(name)", option.summary)) { values, _ in
                        values.flags.insert(name)
                    }
                )
            case .secret(let standardInput):
                bindings += .secretSources(\.secrets[name], name, option.summary, standardInput: standardInput)
            }
        }
        if command.takesParameters { bindings += .providerParameters(\.parameters) }
        return bindings
    }
}

/// A provider's output document, encoded as the value it holds.
struct AnyEncodableDocument: Encodable {
    let document: any Encodable & Sendable

    func encode(to encoder: any Encoder) throws { try document.encode(to: encoder) }
}

extension ProviderCommand.Option.ValueType {
    /// The tool's declaration of the same type (checked by the parser, offered by completion).
    var declared: OptionDeclaration.ValueType {
        switch self {
        case .text: .text
        case .file: .file
        case .directory: .directory
        case .url: .url
        case .integer(let range): .integer(range)
        }
    }
}

extension SecretInput.Source {
    /// The same source as a provider command sees it.
    var providerSource: ProviderCommand.SecretSource {
        switch self {
        case .environment(let variable): .environment(variable: variable)
        case .file(let path): .file(path: path)
        case .standardInput: .standardInput
        }
    }
}

extension CommandContext {
    /// Reads the secret a provider command asks for: from the source it names (one the user gave on
    /// an earlier command), else from where this command line said (`given`), else by asking.
    func secret(_ request: ProviderCommand.SecretRequest, given: SecretInput) throws -> Secret? {
        guard let source = request.source else {
            return try secret(given, prompt: request.prompt, required: request.isRequired)
        }
        var kept = SecretInput(stem: request.name)
        switch source {
        case .environment(let variable): kept.give(.environment(variable: variable))
        case .file(let path): kept.give(.file(path: path))
        case .standardInput: kept.give(.standardInput)
        }
        return try secret(kept, prompt: nil, required: request.isRequired)
    }
}
