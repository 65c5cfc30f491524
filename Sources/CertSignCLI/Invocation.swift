import CertificateProviders
import Foundation
import SignatureJournal

/// One command of the tool: its words, its declared arguments and options, its help, and the function
/// that runs it. Usage, `--help`, completion and the man page are generated from these declarations.
struct CommandDescriptor: Sendable {
    /// The command words (`["identity", "import"]`).
    let words: [String]
    /// One line for the command list.
    let summary: String
    /// The positional arguments, in order.
    let arguments: [ArgumentDeclaration]
    /// The options it accepts.
    let options: [OptionDeclaration]
    /// Longer help after the option list: rules, what is checked, where files go.
    let discussion: String
    /// Example command lines (`certsign …`).
    let examples: [String]
    /// Whether it reads the store (so a store that does not exist is a mistake) or may create it.
    let storeUse: StoreUse
    /// Parses the arguments into the command's options value, then runs the command with it.
    private let execute: @Sendable (_ arguments: [String], _ usage: String, CommandContext) async throws -> Int32

    /// A command whose options (and arguments) are the properties of `Options`: the parser fills
    /// them, converting and checking each value, before `run` is called.
    init<Options: CommandOptions>(
        words: [String],
        storeUse: StoreUse = .mayCreate,
        summary: String,
        discussion: String = "",
        examples: [String] = [],
        options bindings: @escaping @Sendable () -> [OptionBinding<Options>] = { Options.options },
        arguments argumentBindings: @escaping @Sendable () -> [ArgumentBinding<Options>] = { Options.arguments },
        run: @escaping @Sendable (Options, CommandContext) async throws -> Int32
    ) {
        self.storeUse = storeUse
        self.words = words
        self.summary = summary
        self.arguments = argumentBindings().map(\.declaration)
        self.options = bindings().map(\.declaration)
        self.discussion = discussion
        self.examples = examples
        self.execute = { arguments, usage, context in
            try await run(
                try ArgumentParser.parse(
                    arguments,
                    as: Options.self,
                    bindings: bindings(),
                    argumentBindings: argumentBindings(),
                    usage: usage
                ),
                context
            )
        }
    }

    /// A command without arguments or options.
    init(
        words: [String],
        storeUse: StoreUse = .mayCreate,
        summary: String,
        discussion: String = "",
        examples: [String] = [],
        run: @escaping @Sendable (CommandContext) async throws -> Int32
    ) {
        self.init(words: words, storeUse: storeUse, summary: summary, discussion: discussion, examples: examples) {
            (_: NoOptions, context) in try await run(context)
        }
    }

    /// Parses `arguments` (after the command words) and runs the command; returns the exit code.
    /// - Throws: `UsageError` when the command line does not fit the declarations, else what the
    ///   command throws.
    func run(_ arguments: [String], _ context: CommandContext) async throws -> Int32 {
        try await execute(arguments, usage, context)
    }

    /// `identity import`.
    var name: String { words.joined(separator: " ") }

    /// The usage line, generated from the declarations.
    var usage: String { Help.usage(of: self) }
}

/// A parsed command line: global options, the command, its arguments.
struct Invocation {
    var json = false
    var store: String?
    /// `--journal URL`.
    var journal: String?
    var command: CommandDescriptor?
    var arguments: [String] = []
    var helpRequested = false
    var versionRequested = false
    var groupWords: [String] = []
    /// `certsign help WORDS…`.
    var helpWords: [String]?
    /// The whole command line less the command's words (global options included): what `certsign
    /// emulator …` passes on to `certsign-emulator`.
    var argumentsWithoutCommandWords: [String] = []

    static let globalUsage =
        "certsign [--store DIR] [--journal URL] [--json] <command> [options]   (certsign --help lists the commands, certsign help "
        + "COMMAND explains one)"

    /// The options every command accepts, before or after its words.
    static let globalOptions: [OptionDeclaration] = [
        .value(
            "--store",
            "DIR",
            "the identity store and journal (default $CERTSIGN_HOME, else $XDG_DATA_HOME/certsign, else "
                + "~/.local/share/certsign)",
            type: .directory
        ),
        .value(
            "--journal",
            "URL",
            "the signature journal: sqlite:PATH or postgresql://USER@HOST:PORT/DATABASE (password from PGPASSWORD, "
                + "~/.pgpass or PGPASSFILE, never in the URL); default $CERTSIGN_JOURNAL, else the store's "
                + "journal.sqlite",
            type: .text
        ),
        .flag(
            "--json",
            "print one JSON document per command on stdout; a failure prints {\"error\": {code, reason, hint}}"
        ),
        .flag("--help", "help for certsign or for a command (also -h, and 'certsign help COMMAND')"),
        .flag("--version", "print the version"),
    ]

    /// Whether `--json` is among the global options of `arguments` (for reporting failures of parsing itself).
    static func wantsJSON(_ arguments: [String]) -> Bool {
        arguments.prefix { $0 != "--" }.contains("--json")
    }

    /// The provider ID the command line names with `--provider ID` or `--provider=ID` (before `--`),
    /// for hints that fit that provider.
    static func providerArgument(_ arguments: [String]) -> String? {
        let options = arguments.prefix { $0 != "--" }
        for (index, argument) in options.enumerated() {
            if argument.hasPrefix("--provider=") { return String(argument.dropFirst("--provider=".count)) }
            if argument == "--provider", index + 1 < options.count { return options[options.startIndex + index + 1] }
        }
        return nil
    }

    /// Splits out global options (accepted anywhere before `--`) and finds the command.
    static func parse(_ arguments: [String]) throws -> Invocation {
        var invocation = Invocation()
        var rest: [String] = []
        // Where each element of `rest` stands in `arguments`.
        var restPositions: [Int] = []
        var index = 0
        var afterDoubleDash = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if afterDoubleDash {
                rest.append(argument)
                restPositions.append(index - 1)
                continue
            }
            switch argument {
            case "--":
                afterDoubleDash = true
                rest.append(argument)
                restPositions.append(index - 1)
            case "--json": invocation.json = true
            case "--help", "-h": invocation.helpRequested = true
            case "--version": invocation.versionRequested = true
            case "--store", "--journal":
                guard index < arguments.count else {
                    throw UsageError(
                        message: "option \(argument) needs \(argument == "--store" ? "a directory" : "a URL")",
                        usage: globalUsage
                    )
                }
                try invocation.setGlobal(argument, arguments[index])
                index += 1
            default:
                if let name = ["--store", "--journal"].first(where: { argument.hasPrefix($0 + "=") }) {
                    try invocation.setGlobal(name, String(argument.dropFirst(name.count + 1)))
                } else {
                    rest.append(argument)
                    restPositions.append(index - 1)
                }
            }
        }
        if rest.first == "help" {
            invocation.helpWords = Array(rest.dropFirst().prefix { !$0.hasPrefix("-") })
            return invocation
        }
        // The longest run of leading words that names a command.
        let words = rest.prefix { !$0.hasPrefix("-") }
        if let (command, length) = Commands.find(Array(words)) {
            invocation.command = command
            invocation.arguments = Array(rest.dropFirst(length))
            let commandWordPositions = Set(restPositions.prefix(length))
            invocation.argumentsWithoutCommandWords = arguments.enumerated().filter {
                !commandWordPositions.contains($0.offset)
            }.map(\.element)
            return invocation
        }
        invocation.groupWords = Array(words.prefix(1))
        invocation.arguments = rest
        return invocation
    }

    /// Sets a global option with a value, checked against its declared type.
    private mutating func setGlobal(_ name: String, _ value: String) throws {
        if name == "--journal" {
            guard !value.isEmpty else {
                throw UsageError(message: "option --journal needs a URL", usage: Invocation.globalUsage)
            }
            journal = value
        } else {
            store = value
        }
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let console = context.console
        if versionRequested && command == nil {
            console.out(
                context.json
                    ? JSONOutput.encode(VersionDocument(version: CertSign.version)) : "certsign \(CertSign.version)"
            )
            return CertSign.exitSuccess
        }
        if let helpWords {
            console.out(try Help.text(for: helpWords))
            return CertSign.exitSuccess
        }
        guard let command else {
            let group = Commands.all.filter { $0.words.first == groupWords.first && $0.words.count > 1 }
            if !groupWords.isEmpty && !group.isEmpty {
                if helpRequested {
                    console.out(Help.groupHelp(groupWords[0], group))
                    return CertSign.exitSuccess
                }
                let subcommands = group.map { $0.words.dropFirst().joined(separator: " ") }
                var message = "'\(groupWords[0])' needs a subcommand: \(subcommands.joined(separator: ", "))"
                if arguments.count > 1, !arguments[1].hasPrefix("-") {
                    message =
                        "unknown subcommand '\(groupWords[0]) \(arguments[1])'"
                        + ArgumentParser.suggestion(arguments[1], among: subcommands)
                }
                throw UsageError(message: message, usage: Help.groupUsage(groupWords[0]))
            }
            if helpRequested || arguments.isEmpty {
                if helpRequested {
                    console.out(Help.overview())
                    return CertSign.exitSuccess
                }
                throw UsageError(message: "no command given", usage: Invocation.globalUsage)
            }
            if arguments[0].hasPrefix("-") {
                throw UsageError(
                    message: "unknown option \(arguments[0])"
                        + ArgumentParser.suggestion(arguments[0], among: Invocation.globalOptions.map(\.name)),
                    usage: Invocation.globalUsage
                )
            }
            throw UsageError(
                message: "unknown command '\(arguments[0])'"
                    + ArgumentParser.suggestion(arguments[0], among: Commands.topLevelWords),
                usage: Invocation.globalUsage
            )
        }
        if helpRequested {
            var text = Help.commandHelp(command)
            // `sign --help --provider ID`: the parameters that provider takes, from its schema.
            if command.options.contains(where: { $0.name == "--provider" }),
                let index = arguments.firstIndex(of: "--provider"), index + 1 < arguments.count
            {
                let id = ProviderID(arguments[index + 1])
                text += "\n\nparameters of \(id) (--param KEY=VALUE; secret ones only --param-env or --param-file):\n"
                text += try context.makeRegistry().parameterTable(id)
            }
            console.out(text)
            return CertSign.exitSuccess
        }
        try context.checkStoreExists(for: command)
        return try await command.run(arguments, context)
    }
}

/// How a command uses the identity store directory.
enum StoreUse: Sendable {
    /// It does not use the store, or it makes it when missing (import, login, signing into the journal).
    case mayCreate
    /// It reads what the store holds: a store that does not exist is a mistyped `--store`.
    case reads
    /// It reads the journal: the store must exist when the journal is the store's `journal.sqlite`.
    case readsJournal
}

/// Everything a command needs from its surroundings.
struct CommandContext: Sendable {
    let console: Console
    let json: Bool
    /// The identity store directory (`--store`, else ``defaultStoreDirectory(environment:)``).
    let storeDirectory: URL
    /// Whether `--store` named it (a default store that does not exist yet is only empty).
    let storeGiven: Bool
    /// The journal `--journal` or `CERTSIGN_JOURNAL` names; nil for the store's `journal.sqlite`.
    var journalLocation: JournalLocation?
    let environment: [String: String]
    /// The command that runs (for hints on failures a command reports itself and goes on).
    var command: CommandDescriptor?
    /// The command line less the command's words (``Invocation/argumentsWithoutCommandWords``).
    var argumentsWithoutCommandWords: [String] = []
    /// Runs the emulator in this process: set by `certsign-emulator`; nil in `certsign`, whose
    /// `emulator` command runs the `certsign-emulator` beside it.
    var emulatorRunner: EmulatorRunner?

    init(console: Console, json: Bool, storeOverride: String?, environment: [String: String]) throws {
        self.console = console
        self.json = json
        self.environment = environment
        if let storeOverride {
            guard !storeOverride.isEmpty else {
                throw UsageError(message: "--store needs a directory", usage: Invocation.globalUsage)
            }
            storeDirectory = URL(fileURLWithPath: storeOverride)
        } else {
            storeDirectory = Self.defaultStoreDirectory(environment: environment)
        }
        storeGiven = storeOverride != nil
    }

    /// Refuses to run `command`, which reads the store, on a `--store` directory that does not
    /// exist: it would report an empty store (or create a directory) where the user mistyped a path.
    /// - Throws: `.notStored` naming the directory.
    func checkStoreExists(for command: CommandDescriptor) throws {
        guard storeGiven else { return }
        switch command.storeUse {
        case .mayCreate: return
        case .readsJournal where journalLocation != nil: return
        case .reads, .readsJournal: break
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: storeDirectory.path, isDirectory: &isDirectory), isDirectory.boolValue
        {
            return
        }
        throw CertificateProviderError(
            .notStored,
            "the store \(storeDirectory.path) (--store) does not exist; 'certsign \(command.name)' reads a store and "
                + "creates none"
        )
    }

    /// Sets ``journalLocation`` from `--journal`, else `CERTSIGN_JOURNAL`.
    /// - Throws: `.invalidParameter` for a malformed value or one that holds a password.
    mutating func chooseJournal(_ option: String?) throws {
        let environmentValue = environment["CERTSIGN_JOURNAL"].flatMap { $0.isEmpty ? nil : $0 }
        journalLocation = try (option ?? environmentValue).map { try JournalLocation(parsing: $0) }
    }

    /// The tool's store when `--store` is not given: `$CERTSIGN_HOME`, else `$XDG_DATA_HOME/certsign`,
    /// else `~/.local/share/certsign` (the XDG base directory rule). The libraries have no default:
    /// an app chooses where its identities live.
    static func defaultStoreDirectory(environment: [String: String]) -> URL {
        if let home = environment["CERTSIGN_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data, isDirectory: true).appendingPathComponent("certsign", isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(
            ".local/share/certsign",
            isDirectory: true
        )
    }

    /// Prints an `Encodable` value as the JSON document with `--json`, else the human text.
    func emit<Value: Encodable>(encoding value: @autoclosure () -> Value, human: @autoclosure () -> String) {
        if json { console.out(JSONOutput.encode(value())) } else { console.out(human()) }
    }
}
