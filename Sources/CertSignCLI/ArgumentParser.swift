import CertificateProviders

/// A usage mistake on the command line: unknown command or flag, missing argument. Exit code 64.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    /// The usage line of the command concerned.
    public let usage: String
    /// The usage error's message.
    public var description: String { message }
}

enum ArgumentParser {
    /// Option names that would carry a secret as a value: refused with a pointer to the safe forms.
    static let secretOptionNames: Set<String> = ["--password", "--pin", "--dss-password"]

    /// Parses `arguments` (after the command words) into the command's options value: each value is
    /// checked against its declaration and converted to its property's type before the command runs.
    /// - Throws: `UsageError` for unknown options, a missing, ill-typed or unconvertible value, a
    ///   missing required option, or the wrong number of positionals.
    static func parse<Options: CommandOptions>(
        _ arguments: [String],
        as _: Options.Type = Options.self,
        bindings: [OptionBinding<Options>] = Options.options,
        argumentBindings: [ArgumentBinding<Options>] = Options.arguments,
        usage: String
    ) throws -> Options {
        let byName = Dictionary(bindings.map { ($0.declaration.name, $0) }) { first, _ in first }
        var options = Options()
        for binding in bindings { binding.prepare(&options) }
        func converting(_ body: () throws -> Void) throws {
            do { try body() } catch let error as InvalidValue { throw UsageError(message: error.message, usage: usage) }
        }
        var given: Set<String> = []
        var positionals: [String] = []
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
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
            guard let binding = byName[name] else {
                if secretOptionNames.contains(name) {
                    throw UsageError(
                        message:
                            "secrets are never taken on the command line (\(name)); use --…-env VAR, --…-file PATH, "
                            + "--password-stdin or the prompt",
                        usage: usage
                    )
                }
                throw UsageError(
                    message: "unknown option \(name)" + suggestion(name, among: Array(byName.keys)),
                    usage: usage
                )
            }
            let declaration = binding.declaration
            given.insert(name)
            switch declaration.arity {
            case .flag:
                guard inlineValue == nil else {
                    throw UsageError(message: "option \(name) takes no value", usage: usage)
                }
                try converting { try binding.store(&options, nil) }
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
                try converting { try binding.store(&options, value) }
            }
        }
        for binding in bindings where binding.declaration.isRequired && !given.contains(binding.declaration.name) {
            let declaration = binding.declaration
            throw UsageError(message: "\(declaration.name) \(declaration.valueName) is required", usage: usage)
        }
        try converting { try storePositionals(positionals, argumentBindings, into: &options, usage: usage) }
        try converting { try options.validate() }
        return options
    }

    /// Checks the positional arguments against `argumentBindings` (required ones present, no extra
    /// unless the last one repeats) and stores each, converted, in `options`.
    private static func storePositionals<Options: CommandOptions>(
        _ positionals: [String],
        _ argumentBindings: [ArgumentBinding<Options>],
        into options: inout Options,
        usage: String
    ) throws {
        let declared = argumentBindings.map(\.declaration)
        let required = declared.filter { !$0.isOptional }
        if positionals.count < required.count {
            throw UsageError(message: "missing argument \(required[positionals.count].name)", usage: usage)
        }
        let repeating = declared.last?.repeats == true
        if !repeating && positionals.count > declared.count {
            throw UsageError(message: "unexpected argument '\(positionals[declared.count])'", usage: usage)
        }
        for (position, text) in positionals.enumerated() {
            let binding = argumentBindings[min(position, argumentBindings.count - 1)]
            try binding.store(&options, text)
        }
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
        case .url:
            do {
                try URLCredentials.check(
                    value,
                    what: declaration.name,
                    instead: "give a login through the command's own options (--password-env VAR, --param-env "
                        + "KEY=VAR), never in a URL"
                )
            } catch let error as CertificateProviderError {
                throw UsageError(message: error.reason, usage: usage)
            }
        case .text, .file, .directory, .environmentVariable:
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
