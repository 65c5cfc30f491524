/// The command of a command-line tool (such as `certsign`) that met a provider's error, as
/// ``BuiltInProvider/commandLineHint(for:in:)`` sees it: so a provider's hint names only the options
/// and commands that exist where the user is.
public struct ProviderCommandLine: Sendable, Hashable {
    /// The command's words (`["sign"]`, `["dss", "login"]`); empty when the error came before a
    /// command was known.
    public var words: [String]
    /// The options the command takes (`--param`, `--param-env`, `--ca-file`, …).
    public var optionNames: Set<String>

    /// Creates a description of a command.
    public init(words: [String], optionNames: Set<String>) {
        self.words = words
        self.optionNames = optionNames
    }

    /// The options among `candidates` (option name, text to show) that the command takes, joined as
    /// alternatives (`"--param-env pin=VAR or --param-file pin=PATH"`); nil when it takes none.
    public func offering(_ candidates: [(option: String, text: String)]) -> String? {
        let offered = candidates.filter { optionNames.contains($0.option) }.map(\.text)
        guard let last = offered.last else { return nil }
        return offered.count == 1 ? last : offered.dropLast().joined(separator: ", ") + " or " + last
    }
}

/// A provider's "not here" for a command of a command-line tool: why, and the command to use instead
/// (whose usage the tool shows).
public struct ProviderCommandRefusal: Sendable, Hashable {
    /// Why the provider cannot serve the command, naming what to use instead.
    public var reason: String
    /// The words of the command to use instead (`["dss", "sign"]`), or empty when there is none.
    public var instead: [String]

    /// Creates a refusal.
    public init(reason: String, instead: [String] = []) {
        self.reason = reason
        self.instead = instead
    }
}
