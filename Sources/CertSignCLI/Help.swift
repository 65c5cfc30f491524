/// Usage lines and help texts, generated from the command declarations (``CommandDescriptor``,
/// ``OptionDeclaration``): nothing here is written per command.
enum Help {
    /// `a`, `a or b`, `a, b or c`.
    static func alternatives(_ words: [String]) -> String {
        guard words.count > 1 else { return words.first ?? "" }
        return words.dropLast().joined(separator: ", ") + " or " + (words.last ?? "")
    }

    /// The usage line of a command: its words, arguments and options (alternatives as `[a | b]`).
    static func usage(of command: CommandDescriptor) -> String {
        var parts = ["certsign"] + command.words + command.arguments.map(\.synopsis)
        var index = 0
        let options = command.options
        while index < options.count {
            let option = options[index]
            if let group = option.group {
                var members: [OptionDeclaration] = []
                while index < options.count, options[index].group == group {
                    members.append(options[index])
                    index += 1
                }
                let text = members.map(\.synopsis).joined(separator: " | ")
                parts.append(members.count == 1 && members[0].isRequired ? text : "[\(text)]")
                continue
            }
            switch option.arity {
            case .flag: parts.append("[\(option.synopsis)]")
            case .single: parts.append(option.isRequired ? option.synopsis : "[\(option.synopsis)]")
            case .repeatable: parts.append("[\(option.synopsis)]...")
            }
            index += 1
        }
        return parts.joined(separator: " ")
    }

    /// `certsign identity <subcommand> [options]`.
    static func groupUsage(_ group: String) -> String { "certsign \(group) <subcommand> [options]" }

    /// Two columns: what to type, what it does; long left cells put the text on the next line.
    static func columns(_ rows: [(String, String)], indent: String = "  ") -> String {
        let width = min(rows.map(\.0.count).max() ?? 0, 26)
        let pad = String(repeating: " ", count: indent.count + width + 2)
        return rows.map { left, right in
            let lines = right.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            var text = indent + left
            if left.count > width {
                text += "\n" + pad + (lines.first ?? "")
            } else {
                text += String(repeating: " ", count: width - left.count + 2) + (lines.first ?? "")
            }
            for line in lines.dropFirst() { text += "\n" + pad + line }
            return text
        }.joined(separator: "\n")
    }

    /// One option's help line with its default.
    static func optionHelp(_ option: OptionDeclaration) -> String {
        var text = option.help
        if let defaultValue = option.defaultValue { text += " (default: \(defaultValue))" }
        if option.isRequired { text += " (required)" }
        if option.arity == .repeatable { text += "; repeatable" }
        return text
    }

    /// `certsign COMMAND --help` and `certsign help COMMAND`.
    static func commandHelp(_ command: CommandDescriptor) -> String {
        var sections = ["usage: \(command.usage)", command.summary]
        if !command.arguments.isEmpty {
            sections.append("arguments:\n" + columns(command.arguments.map { ($0.synopsis, $0.help) }))
        }
        if !command.options.isEmpty {
            sections.append("options:\n" + columns(command.options.map { ($0.synopsis, optionHelp($0)) }))
        }
        sections.append("global options: --store DIR, --json, --help (see certsign --help)")
        if !command.discussion.isEmpty { sections.append(command.discussion) }
        if !command.examples.isEmpty {
            sections.append(command.examples.map { "example: \($0)" }.joined(separator: "\n"))
        }
        return sections.joined(separator: "\n\n")
    }

    /// `certsign identity --help`: a usage line and the subcommands.
    static func groupHelp(_ group: String, _ commands: [CommandDescriptor]) -> String {
        """
        usage: \(groupUsage(group))

        subcommands:
        \(Commands.listing(commands, dropping: 1))

        'certsign \(group) SUBCOMMAND --help' or 'certsign help \(group) SUBCOMMAND' explains one.
        """
    }

    /// `certsign --help`.
    static func overview() -> String {
        """
        certsign \(CertSign.version): sign and verify documents with certificates from any provider.

        usage: \(Invocation.globalUsage)

        commands:
        \(Commands.listing(Commands.all))

        global options:
        \(columns(Invocation.globalOptions.map { ($0.synopsis, optionHelp($0)) }))

        secrets are never taken as command-line values: use --password-env VAR, --password-file PATH
        (the file's first line), --password-stdin, or answer the prompt when stdin is a terminal.
        distinguished names print in RFC 4514 form, most specific first: CN=Ivanov,O=Example,C=RU.
        exit codes: 0 success, 1 the operation failed, 2 verify: none FAILED but one INDETERMINATE, 64 usage
        error.
        """
    }

    /// `certsign help help`.
    static let helpOnHelp = """
        usage: certsign help [COMMAND [SUBCOMMAND]]

        shows the overview (no COMMAND), the commands of a group (certsign help identity) or one command's
        arguments, options and examples (certsign help sign); the same as COMMAND --help.
        """

    /// `certsign help WORDS…`: the overview, a group's help or a command's help.
    /// - Throws: `UsageError` (with a suggestion) when the words name nothing.
    static func text(for words: [String]) throws -> String {
        if words.isEmpty { return overview() }
        if words == ["help"] { return helpOnHelp }
        if let (command, length) = Commands.find(words), length == words.count { return commandHelp(command) }
        let group = Commands.all.filter { $0.words.count > 1 && $0.words.first == words[0] }
        if !group.isEmpty {
            if words.count == 1 { return groupHelp(words[0], group) }
            let subcommands = group.map { $0.words.dropFirst().joined(separator: " ") }
            throw UsageError(
                message: "unknown subcommand '\(words.joined(separator: " "))'"
                    + ArgumentParser.suggestion(words.dropFirst().joined(separator: " "), among: subcommands),
                usage: "certsign help \(words[0]) SUBCOMMAND"
            )
        }
        throw UsageError(
            message: "no command '\(words.joined(separator: " "))'"
                + ArgumentParser.suggestion(words[0], among: Commands.topLevelWords),
            usage: "certsign help [COMMAND]"
        )
    }
}
