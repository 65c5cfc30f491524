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
    /// The positional arguments, in order; each must be given once.
    public var arguments: [Argument]
    /// Whether the command reads what the tool's store holds (a session, identities): the tool then
    /// refuses a store directory that does not exist (a mistyped `--store`) before the command runs.
    public var readsStore: Bool
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
        arguments: [Argument] = [],
        readsStore: Bool = false,
        takesParameters: Bool = false,
        run: @escaping @Sendable (Invocation) async throws -> Output
    ) {
        self.words = words
        self.summary = summary
        self.discussion = discussion
        self.examples = examples
        self.options = options
        self.arguments = arguments
        self.readsStore = readsStore
        self.takesParameters = takesParameters
        self.run = run
    }

    /// One option of a command.
    public struct Option: Sendable, Hashable {
        /// What the option takes.
        public enum Kind: Sendable, Hashable {
            /// One value (`--module PATH`), checked against `type` when the command line is read.
            case value(placeholder: String, type: ValueType = .text)
            /// A flag (`--verbose`).
            case flag
            /// A secret, given as `--NAME-env VAR`, `--NAME-file PATH` or (when `standardInput`)
            /// `--NAME-stdin`, never as text; read with ``Invocation/secret(_:prompt:)``.
            case secret(standardInput: Bool)
        }

        /// What a value option takes: the tool checks it before the command runs (a usage error naming
        /// the option otherwise) and shell completion offers what fits.
        public enum ValueType: Sendable, Hashable {
            /// Free text.
            case text
            /// A file path.
            case file
            /// A directory path.
            case directory
            /// An http:// or https:// URL without a login in it.
            case url
            /// A whole number in the range.
            case integer(ClosedRange<Int>)
        }

        /// The name without dashes (`module`; for a secret, the stem: `pin`).
        public var name: String
        /// What it takes.
        public var kind: Kind
        /// One line of help.
        public var summary: String
        /// Words for the default help shows (`p11-kit-proxy.so`), or nil.
        public var defaultText: String?
        /// Whether the command cannot run without it (a value option; the tool refuses the command
        /// line otherwise).
        public var isRequired: Bool

        /// Creates an option.
        public init(
            _ name: String,
            _ kind: Kind,
            _ summary: String,
            default defaultText: String? = nil,
            required isRequired: Bool = false
        ) {
            self.name = name
            self.kind = kind
            self.summary = summary
            self.defaultText = defaultText
            self.isRequired = isRequired
        }
    }

    /// One positional argument of a command (`certsign dss remove ID`).
    public struct Argument: Sendable, Hashable {
        /// What usage calls it (`ID`).
        public var name: String
        /// One line of help.
        public var summary: String
        /// What it is, for shell completion (`.file` offers files).
        public var type: Option.ValueType

        /// Creates an argument.
        public init(_ name: String, _ summary: String, type: Option.ValueType = .text) {
            self.name = name
            self.summary = summary
            self.type = type
        }
    }

    /// Where the user said a secret comes from: a variable's name or a file's path, never the secret.
    /// A provider may keep it (never the secret) to read the secret again on a later command.
    public enum SecretSource: Sendable, Hashable {
        /// The environment variable of this name.
        case environment(variable: String)
        /// The first line of the file at this path.
        case file(path: String)
        /// The first line of standard input.
        case standardInput
    }

    /// One secret a command asks the tool for (see ``Invocation/secret(_:prompt:)``).
    public struct SecretRequest: Sendable, Hashable {
        /// The secret option's name (its stem: `pin` for `--pin-env`).
        public var name: String
        /// Where to read it from; nil means where the command line said.
        public var source: SecretSource?
        /// What the tool asks on its terminal when the command line named no source; nil never asks.
        public var prompt: String?
        /// Whether a secret that is not given is an error (else the answer is nil).
        public var isRequired: Bool

        /// Creates a request.
        public init(name: String, source: SecretSource? = nil, prompt: String? = nil, isRequired: Bool = false) {
            self.name = name
            self.source = source
            self.prompt = prompt
            self.isRequired = isRequired
        }
    }

    /// What the tool hands the command: the options and arguments given, where each secret comes
    /// from (read only when the command asks), the provider's parameters, and what the host lends
    /// every provider.
    public struct Invocation: Sendable {
        /// The value options given, by name (without dashes).
        public var values: [String: String]
        /// The flags given, by name.
        public var flags: Set<String>
        /// The positional arguments, in the order ``ProviderCommand/arguments`` declares them.
        public var arguments: [String]
        /// Where each secret option given comes from, by name (a provider may keep a variable's name or
        /// a file's path to read the secret again later).
        public var secretSources: [String: SecretSource]
        /// Reads one secret for the command (from where the user said, or by asking on a terminal);
        /// the tool supplies it. Commands call ``secret(_:prompt:)`` and its siblings instead.
        public var secretReader: @Sendable (SecretRequest) throws -> Secret?
        /// The provider's parameters (`--param…`), already checked against its schema; empty when the
        /// command takes none.
        public var parameters: ProviderParameters
        /// The store directory, environment, client identity lookup and warning callback of the tool.
        public var context: ProviderContext
        /// How the tool writes a date for people (its local time, as its other commands do).
        public var dateText: @Sendable (Date) -> String
        /// Asks the person at the tool's terminal a yes/no question (true for yes); nil when there is no
        /// terminal to ask (scripts are never asked).
        public var confirm: (@Sendable (String) -> Bool)?

        /// Creates an invocation.
        public init(
            values: [String: String] = [:],
            flags: Set<String> = [],
            arguments: [String] = [],
            secretSources: [String: SecretSource] = [:],
            secretReader: @escaping @Sendable (SecretRequest) throws -> Secret? = { _ in nil },
            parameters: ProviderParameters = ProviderParameters(),
            context: ProviderContext = ProviderContext(),
            dateText: @escaping @Sendable (Date) -> String = { $0.formatted(.iso8601) },
            confirm: (@Sendable (String) -> Bool)? = nil
        ) {
            self.values = values
            self.flags = flags
            self.arguments = arguments
            self.secretSources = secretSources
            self.secretReader = secretReader
            self.parameters = parameters
            self.context = context
            self.dateText = dateText
            self.confirm = confirm
        }

        /// The value option `name`, which the command cannot do without.
        /// - Throws: ``ProviderCommand/UsageError`` (`--NAME is required`) when it is missing or empty.
        public func requiredValue(_ name: String) throws -> String {
            guard let text = values[name], !text.isEmpty else {
                throw UsageError("--\(name) is required")
            }
            return text
        }

        /// The secret option `name` from where the command line said; when it named no source and
        /// `prompt` is given, the tool asks on its terminal. Nil when there is none. Ask only when the
        /// secret is needed: a command that fails first for another reason then reads nothing.
        /// - Throws: when the named source cannot be read (a variable not set, a file not readable).
        public func secret(_ name: String, prompt: String? = nil) throws -> Secret? {
            try secretReader(SecretRequest(name: name, prompt: prompt))
        }

        /// The secret option `name`, which the command cannot do without (asked for on a terminal with
        /// `prompt` when the command line named no source).
        /// - Throws: `.passwordRequired` naming the options that give it when there is none; what
        ///   ``secret(_:prompt:)`` throws.
        public func requiredSecret(_ name: String, prompt: String) throws -> Secret {
            guard let secret = try secretReader(SecretRequest(name: name, prompt: prompt, isRequired: true)) else {
                throw CertificateProviderError(.passwordRequired, "\(name) is needed")
            }
            return secret
        }

        /// The secret of option `name` from a source the user named on an earlier command (a kept
        /// variable's name or file's path), read as that option reads it.
        /// - Throws: `.invalidParameter` for a variable not set, `.fileSystem` for a file not readable.
        public func secret(_ name: String, from source: SecretSource) throws -> Secret {
            guard let secret = try secretReader(SecretRequest(name: name, source: source, isRequired: true)) else {
                throw CertificateProviderError(.passwordRequired, "\(name) is needed")
            }
            return secret
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

    /// A failure that has a document of its own to show (the server's answer to the failed call):
    /// with `--json` the tool prints ``document`` on standard output, then reports ``error`` as it
    /// reports any error (its message, hint and exit code).
    public struct Failure: Error, Sendable {
        /// What failed; its exit code and hint are the tool's for this error.
        public var error: any Error
        /// The document printed with `--json` before the error.
        public var document: any Encodable & Sendable

        /// Creates a failure.
        public init(_ error: any Error, document: any Encodable & Sendable) {
            self.error = error
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
