import Foundation

/// A command a provider adds to a command-line tool such as `certsign` (`certsign csc credentials`,
/// `certsign tokens`): what only this provider can answer, declared here so that the tool names no
/// provider. The tool parses the options, reads the secrets from where the user said (never from the
/// command line), runs ``run`` and prints the ``Output`` as text or, with `--json`, as its document.
///
/// A provider lists its commands in ``BuiltInProvider/commands``.
public struct ProviderCommand: Sendable {
    /// The command's words (`["csc", "credentials"]`).
    public var words: [String]
    /// One line for the command list.
    public var summary: String
    /// Longer help after the option list.
    public var discussion: String
    /// Example command lines (`certsign …`).
    public var examples: [String]
    /// The options, in the order help lists them.
    public var options: [Option]
    /// Whether the command takes the provider's parameters (`--param KEY=VALUE`, `--param-env KEY=VAR`,
    /// `--param-file KEY=PATH`, checked against the provider's schema).
    public var takesParameters: Bool
    /// Runs the command.
    public var run: @Sendable (Invocation) async throws -> Output

    /// Creates a command.
    public init(
        words: [String],
        summary: String,
        discussion: String = "",
        examples: [String] = [],
        options: [Option] = [],
        takesParameters: Bool = false,
        run: @escaping @Sendable (Invocation) async throws -> Output
    ) {
        self.words = words
        self.summary = summary
        self.discussion = discussion
        self.examples = examples
        self.options = options
        self.takesParameters = takesParameters
        self.run = run
    }

    /// One option of a command.
    public struct Option: Sendable, Hashable {
        /// What the option takes.
        public enum Kind: Sendable, Hashable {
            /// One value (`--module PATH`); `isFile` lets shell completion offer files.
            case value(placeholder: String, isFile: Bool)
            /// A flag (`--verbose`).
            case flag
            /// A secret, given as `--NAME-env VAR`, `--NAME-file PATH` or `--NAME-stdin`, never as text.
            case secret
        }

        /// The name without dashes (`module`; for a secret, the stem: `pin`).
        public var name: String
        /// What it takes.
        public var kind: Kind
        /// One line of help.
        public var summary: String
        /// Words for the default help shows (`p11-kit-proxy.so`), or nil.
        public var defaultText: String?

        /// Creates an option.
        public init(_ name: String, _ kind: Kind, _ summary: String, default defaultText: String? = nil) {
            self.name = name
            self.kind = kind
            self.summary = summary
            self.defaultText = defaultText
        }
    }

    /// What the tool hands the command: the options given, the secrets read, the provider's
    /// parameters, and what the host lends every provider.
    public struct Invocation: Sendable {
        /// The value options given, by name (without dashes).
        public var values: [String: String]
        /// The flags given, by name.
        public var flags: Set<String>
        /// The secrets given, by stem, already read from where the user said.
        public var secrets: [String: Secret]
        /// The provider's parameters (`--param…`), already checked against its schema; empty when the
        /// command takes none.
        public var parameters: ProviderParameters
        /// The store directory, environment, client identity lookup and warning callback of the tool.
        public var context: ProviderContext
        /// How the tool writes a date for people (its local time, as its other commands do).
        public var dateText: @Sendable (Date) -> String

        /// Creates an invocation.
        public init(
            values: [String: String] = [:],
            flags: Set<String> = [],
            secrets: [String: Secret] = [:],
            parameters: ProviderParameters = ProviderParameters(),
            context: ProviderContext = ProviderContext(),
            dateText: @escaping @Sendable (Date) -> String = { $0.formatted(.iso8601) }
        ) {
            self.values = values
            self.flags = flags
            self.secrets = secrets
            self.parameters = parameters
            self.context = context
            self.dateText = dateText
        }
    }

    /// What a command answers: text or a table for people, and a document for `--json`.
    public struct Output: Sendable {
        /// What people read.
        public enum Human: Sendable, Hashable {
            /// Lines of text.
            case text(String)
            /// A table the tool lays out in columns; `whenEmpty` is printed when there are no rows.
            case table(headers: [String], rows: [[String]], whenEmpty: String)
        }

        /// What is printed without `--json`.
        public var human: Human
        /// The document printed with `--json` (its coding keys are the JSON field names).
        public var document: any Encodable & Sendable

        /// Creates an output of text lines.
        public init(text: String, document: any Encodable & Sendable) {
            self.human = .text(text)
            self.document = document
        }

        /// Creates an output of a table.
        public init(
            headers: [String],
            rows: [[String]],
            whenEmpty: String,
            document: any Encodable & Sendable
        ) {
            self.human = .table(headers: headers, rows: rows, whenEmpty: whenEmpty)
            self.document = document
        }
    }

    /// A command line that does not fit the command (a required option missing, a value it does not
    /// take): the tool prints it with the command's usage and exits 64.
    public struct UsageError: Error, Sendable, CustomStringConvertible {
        /// What does not fit, naming the option.
        public var message: String

        /// Creates a usage error.
        public init(_ message: String) { self.message = message }

        /// The message.
        public var description: String { message }
    }
}
