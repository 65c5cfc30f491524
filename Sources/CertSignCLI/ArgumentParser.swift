/// A usage mistake on the command line: unknown command or flag, missing argument. Exit code 64.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    /// The usage line of the command concerned.
    public let usage: String
    /// The usage error's message.
    public var description: String { message }
}

/// The parsed arguments of one command: every value was checked against its declaration (arity,
/// type, required) before the command runs.
struct ParsedArguments: Sendable {
    var positionals: [String] = []
    var flags: Set<String> = []
    var options: [String: [String]] = [:]
    /// The names the command declares: reading any other name is a programming error.
    var declared: Set<String> = []

    /// The last value of an option.
    func value(_ name: String) -> String? {
        checkDeclared(name)
        return options[name]?.last
    }
    /// Every value of a repeatable option, in order.
    func values(_ name: String) -> [String] {
        checkDeclared(name)
        return options[name] ?? []
    }
    /// Whether a flag was given.
    func has(_ name: String) -> Bool {
        checkDeclared(name)
        return flags.contains(name)
    }
    /// The value of an `.integer` option (checked at parse time).
    func integer(_ name: String) -> Int? { value(name).flatMap { Int($0) } }

    private func checkDeclared(_ name: String) {
        assert(declared.isEmpty || declared.contains(name), "the command reads the undeclared option \(name)")
    }
}

enum ArgumentParser {
    /// Option names that would carry a secret as a value: refused with a pointer to the safe forms.
    static let secretOptionNames: Set<String> = ["--password", "--pin", "--dss-password"]

    /// Parses `arguments` (after the command words) against the command's declarations.
    /// - Throws: `UsageError` for unknown options, a missing or ill-typed value, a missing required
    ///   option, or the wrong number of positionals.
    static func parse(_ arguments: [String], command: CommandDescriptor) throws -> ParsedArguments {
        let usage = command.usage
        let declarations = Dictionary(command.options.map { ($0.name, $0) }) { first, _ in first }
        var result = ParsedArguments(declared: Set(declarations.keys))
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let declaration = declarations[name] else {
                if secretOptionNames.contains(name) {
                    throw UsageError(
                        message:
                            "secrets are never taken on the command line (\(name)); use --…-env VAR, --…-file PATH, "
                            + "--password-stdin or the prompt",
                        usage: usage
                    )
                }
                throw UsageError(
                    message: "unknown option \(name)" + suggestion(name, among: Array(declarations.keys)),
                    usage: usage
                )
            }
            switch declaration.arity {
            case .flag:
                guard inlineValue == nil else {
                    throw UsageError(message: "option \(name) takes no value", usage: usage)
                }
                result.flags.insert(name)
            case .single, .repeatable:
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else {
                        throw UsageError(message: "option \(name) needs a value", usage: usage)
                    }
                    value = arguments[index]
                    index += 1
                }
                try check(value, of: declaration, usage: usage)
                if declaration.arity == .repeatable {
                    result.options[name, default: []].append(value)
                } else {
                    result.options[name] = [value]
                }
            }
        }
        for declaration in command.options where declaration.isRequired && result.options[declaration.name] == nil {
            throw UsageError(message: "\(declaration.name) \(declaration.valueName) is required", usage: usage)
        }
        let required = command.arguments.filter { !$0.isOptional }.count
        if result.positionals.count < required {
            let missing = command.arguments.filter { !$0.isOptional }[result.positionals.count]
            throw UsageError(message: "missing argument \(missing.name)", usage: usage)
        }
        let unbounded = command.arguments.contains(where: \.repeats)
        if !unbounded && result.positionals.count > command.arguments.count {
            throw UsageError(
                message: "unexpected argument '\(result.positionals[command.arguments.count])'",
                usage: usage
            )
        }
        return result
    }

    /// Checks a value against its declared type.
    static func check(_ value: String, of declaration: OptionDeclaration, usage: String) throws {
        switch declaration.valueType {
        case .integer(let range):
            guard let number = Int(value), range.contains(number) else {
                throw UsageError(
                    message:
                        "\(declaration.name) must be a whole number in \(range.lowerBound)…\(range.upperBound), not "
                        + "'\(value)'",
                    usage: usage
                )
            }
        case .choice(let words):
            guard words.contains(value) else {
                throw UsageError(
                    message: "unknown \(declaration.name) '\(value)' (\(Help.alternatives(words)))",
                    usage: usage
                )
            }
        case .keyValue:
            guard let equals = value.firstIndex(of: "="), equals != value.startIndex else {
                throw UsageError(
                    message: "\(declaration.name) takes \(declaration.valueName), not '\(value)'",
                    usage: usage
                )
            }
        case .text, .file, .directory, .url, .environmentVariable:
            break
        }
    }

    /// ` (did you mean '…'?)` when one candidate is close to `word` (edit distance at most 2, or a prefix).
    static func suggestion(_ word: String, among candidates: [String]) -> String {
        let scored = candidates.map { ($0, editDistance(word, $0)) }.filter { $0.1 <= max(2, word.count / 3) }
        let best =
            scored.min { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
            ?? candidates.sorted().first { $0.hasPrefix(word) && word.count >= 3 }.map { ($0, 0) }
        guard let best else { return "" }
        return " (did you mean '\(best.0)'?)"
    }

    /// Levenshtein distance.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
