import CertificateProviders
import Foundation

/// One command of the tool: its words, help and the function that runs it.
struct CommandDescriptor: Sendable {
    /// The command words (`["identity", "import"]`).
    let words: [String]
    /// One line for the command list.
    let summary: String
    /// The usage line, printed with usage errors and `--help`.
    let usage: String
    /// Longer help: options and an example.
    let details: String
    /// The options it accepts.
    let spec: OptionSpec
    /// Runs it; returns the exit code.
    let run: @Sendable (ParsedArguments, CommandContext) async throws -> Int32

    var name: String { words.joined(separator: " ") }
}

/// A parsed command line: global options, the command, its arguments.
struct Invocation {
    var json = false
    var store: String?
    var command: CommandDescriptor?
    var arguments: [String] = []
    var helpRequested = false
    var versionRequested = false
    var groupWords: [String] = []

    static let globalUsage =
        "certsign [--store DIR] [--json] <command> [options]   (certsign --help lists the commands)"

    /// Splits out global options (accepted anywhere before `--`) and finds the command.
    static func parse(_ arguments: [String]) throws -> Invocation {
        var invocation = Invocation()
        var rest: [String] = []
        var index = 0
        var afterDoubleDash = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if afterDoubleDash {
                rest.append(argument)
                continue
            }
            switch argument {
            case "--":
                afterDoubleDash = true
                rest.append(argument)
            case "--json": invocation.json = true
            case "--help", "-h": invocation.helpRequested = true
            case "--version": invocation.versionRequested = true
            case "--store":
                guard index < arguments.count else {
                    throw UsageError(message: "option --store needs a directory", usage: globalUsage)
                }
                invocation.store = arguments[index]
                index += 1
            default:
                if argument.hasPrefix("--store=") {
                    invocation.store = String(argument.dropFirst("--store=".count))
                } else {
                    rest.append(argument)
                }
            }
        }
        // The longest run of leading words that names a command.
        let words = rest.prefix { !$0.hasPrefix("-") }
        for length in stride(from: min(words.count, 3), through: 1, by: -1) {
            let candidate = Array(words.prefix(length))
            if let command = Commands.all.first(where: { $0.words == candidate }) {
                invocation.command = command
                invocation.arguments = Array(rest.dropFirst(length))
                return invocation
            }
        }
        invocation.groupWords = Array(words.prefix(1))
        invocation.arguments = rest
        return invocation
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let console = context.console
        if versionRequested && command == nil {
            console.out(
                context.json ? JSONOutput.render(["version": CertSign.version]) : "certsign \(CertSign.version)"
            )
            return CertSign.exitSuccess
        }
        guard let command else {
            let group = Commands.all.filter { $0.words.first == groupWords.first }
            if !groupWords.isEmpty && !group.isEmpty {
                if helpRequested {
                    console.out(Commands.listing(group))
                    return CertSign.exitSuccess
                }
                throw UsageError(
                    message:
                        "'\(groupWords[0])' needs a subcommand: \(group.map { $0.words.dropFirst().joined(separator: " ") }.joined(separator: ", "))",
                    usage: group.map(\.usage).joined(separator: "\n       ")
                )
            }
            if helpRequested || arguments.isEmpty {
                if helpRequested {
                    console.out(Commands.overview())
                    return CertSign.exitSuccess
                }
                throw UsageError(message: "no command given", usage: Invocation.globalUsage)
            }
            throw UsageError(message: "unknown command '\(arguments[0])'", usage: Invocation.globalUsage)
        }
        if helpRequested {
            console.out(
                "usage: \(command.usage)\n\n\(command.summary)\n\(command.details.isEmpty ? "" : "\n" + command.details)"
            )
            return CertSign.exitSuccess
        }
        let parsed = try ArgumentParser.parse(arguments, spec: command.spec, usage: command.usage)
        return try await command.run(parsed, context)
    }
}

/// Everything a command needs from its surroundings.
struct CommandContext: Sendable {
    let console: Console
    let json: Bool
    /// The identity store directory (`--store`, `$CERTSIGN_HOME`, `$XDG_DATA_HOME/certsign`, `~/.local/share/certsign`).
    let storeDirectory: URL
    let environment: [String: String]

    init(console: Console, json: Bool, storeOverride: String?, environment: [String: String]) throws {
        self.console = console
        self.json = json
        self.environment = environment
        if let storeOverride {
            guard !storeOverride.isEmpty else {
                throw UsageError(message: "--store needs a directory", usage: Invocation.globalUsage)
            }
            storeDirectory = URL(fileURLWithPath: storeOverride)
        } else if let home = environment["CERTSIGN_HOME"], !home.isEmpty {
            storeDirectory = URL(fileURLWithPath: home)
        } else if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            storeDirectory = URL(fileURLWithPath: data).appendingPathComponent("certsign")
        } else {
            let home = environment["HOME"] ?? NSHomeDirectory()
            storeDirectory = URL(fileURLWithPath: home).appendingPathComponent(".local/share/certsign")
        }
    }

    /// Prints a JSON document with `--json`, else the human text.
    func emit(_ json: @autoclosure () -> Any, human: @autoclosure () -> String) {
        if self.json { console.out(JSONOutput.render(json())) } else { console.out(human()) }
    }

    // MARK: Secrets

    /// Reads one secret from `--<name>-env VAR`, `--<name>-file PATH`, `--<name>-stdin` (when the
    /// command accepts it) or, when stdin is a terminal, a prompt without echo.
    /// - Parameters:
    ///   - name: the option stem (`password`, `pin`, `dss-password`).
    ///   - prompt: what the prompt says.
    ///   - required: whether a missing secret is an error (else nil is returned without prompting
    ///     when stdin is not a terminal).
    func secret(
        _ parsed: ParsedArguments,
        name: String = "password",
        prompt: String,
        required: Bool = true
    ) throws -> Secret? {
        if let variable = parsed.value("--\(name)-env") {
            guard let value = environment[variable] else {
                throw CertificateProviderError.invalidParameter(
                    "environment variable \(variable) (from --\(name)-env) is not set"
                )
            }
            return Secret(value)
        }
        if let path = parsed.value("--\(name)-file") {
            return try readSecretFile(path, option: "--\(name)-file")
        }
        if parsed.has("--\(name)-stdin") {
            var data = console.readStandardInput()
            return Secret(wiping: &data).trimmingTrailingNewline()
        }
        if console.inputIsTerminal { return try console.promptSecret(prompt) }
        if required {
            throw CertificateProviderError(
                .passwordRequired,
                "\(prompt.trimmingCharacters(in: CharacterSet(charactersIn: ": "))) is needed and stdin is not a terminal; use --\(name)-env VAR or --\(name)-file PATH"
            )
        }
        return nil
    }

    func readSecretFile(_ path: String, option: String) throws -> Secret {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CertificateProviderError(.fileSystem, "cannot read the secret file \(path) (from \(option))")
        }
        defer { try? handle.close() }
        var data = handle.readDataToEndOfFile()
        return Secret(wiping: &data).trimmingTrailingNewline()
    }

    /// Provider parameters from `--param K=V` (typed and checked by the provider's schema, which
    /// refuses secrets there), `--param-env K=VAR` (secret) and `--param-file K=PATH` (secret).
    func providerParameters(_ parsed: ParsedArguments, for provider: ProviderID) throws -> ProviderParameters {
        var parameters = ProviderParameters()
        func split(_ text: String, _ option: String) throws -> (ProviderParameters.Key, String) {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                throw UsageError(message: "\(option) takes KEY=VALUE, not '\(text)'", usage: "\(option) KEY=VALUE")
            }
            return (ProviderParameters.Key(String(text[..<equals])), String(text[text.index(after: equals)...]))
        }
        let schema = try makeRegistry().registration(provider)?.schema
        for item in parsed.values("--param") {
            let (key, value) = try split(item, "--param")
            do {
                parameters[key] = try schema?.commandLineValue(key, value) ?? .string(value)
            } catch let error as CertificateProviderError where schema?[key]?.isSecret == true {
                // The schema's refusal, as a usage error: the command line itself is wrong.
                throw UsageError(message: error.reason, usage: "--param-env KEY=VAR | --param-file KEY=PATH")
            }
        }
        for item in parsed.values("--param-env") {
            let (key, variable) = try split(item, "--param-env")
            guard let value = environment[variable] else {
                throw CertificateProviderError.invalidParameter(
                    "environment variable \(variable) (from --param-env \(key)=…) is not set"
                )
            }
            parameters[key] = .secret(Secret(value))
        }
        for item in parsed.values("--param-file") {
            let (key, path) = try split(item, "--param-file")
            parameters[key] = .secret(try readSecretFile(path, option: "--param-file \(key)"))
        }
        return parameters
    }
}
