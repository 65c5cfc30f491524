/// A usage mistake on the command line: unknown command or flag, missing argument. Exit code 64.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    /// The usage line of the command concerned.
    public let usage: String
    /// The usage error's message.
    public var description: String { message }
}

/// The options a command accepts.
struct OptionSpec: Sendable {
    /// Options that take no value (`--attached`).
    var flags: Set<String> = []
    /// Options that take one value (`--out FILE`); the last occurrence wins unless repeatable.
    var options: Set<String> = []
    /// Options that may be given several times (`--param K=V`, `--ca FILE`).
    var repeatable: Set<String> = []
    /// How many positional arguments: minimum and maximum (nil = unbounded).
    var positionals: ClosedRange<Int> = 0...0
    var unboundedPositionals = false

    static let secretOptions: Set<String> = ["--password-env", "--password-file"]

    /// The spec plus the options that supply one password (`--password-env`, `--password-file`,
    /// `--password-stdin`).
    func withPassword() -> OptionSpec {
        var copy = self
        copy.options.formUnion(Self.secretOptions)
        copy.flags.insert("--password-stdin")
        return copy
    }
}

/// The parsed arguments of one command.
struct ParsedArguments: Sendable {
    var positionals: [String] = []
    var flags: Set<String> = []
    var options: [String: [String]] = [:]

    /// The last value of an option.
    func value(_ name: String) -> String? { options[name]?.last }
    /// Every value of a repeatable option, in order.
    func values(_ name: String) -> [String] { options[name] ?? [] }
    /// Whether a flag was given.
    func has(_ name: String) -> Bool { flags.contains(name) }
}

enum ArgumentParser {
    /// Parses `arguments` (after the command words) against `spec`.
    /// - Throws: `UsageError` for unknown options, a missing value, or the wrong number of positionals.
    static func parse(_ arguments: [String], spec: OptionSpec, usage: String) throws -> ParsedArguments {
        var result = ParsedArguments()
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
            if spec.flags.contains(name) {
                guard inlineValue == nil else {
                    throw UsageError(message: "option \(name) takes no value", usage: usage)
                }
                result.flags.insert(name)
            } else if spec.options.contains(name) || spec.repeatable.contains(name) {
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
                if spec.repeatable.contains(name) {
                    result.options[name, default: []].append(value)
                } else {
                    result.options[name] = [value]
                }
            } else if ["password", "pin", "dss-password"].map({ "--" + $0 }).contains(name) {
                throw UsageError(
                    message:
                        "secrets are never taken on the command line (\(name)); use --…-env VAR, --…-file PATH, --password-stdin or the prompt",
                    usage: usage
                )
            } else {
                throw UsageError(message: "unknown option \(name)", usage: usage)
            }
        }
        if result.positionals.count < spec.positionals.lowerBound {
            throw UsageError(message: "missing argument", usage: usage)
        }
        if !spec.unboundedPositionals && result.positionals.count > spec.positionals.upperBound {
            throw UsageError(
                message: "unexpected argument '\(result.positionals[spec.positionals.upperBound])'",
                usage: usage
            )
        }
        return result
    }
}
