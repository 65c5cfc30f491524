import Foundation

/// The parameters one provider takes, each declared once: key, type, whether it is secret, its
/// default and a one-line description.
///
/// Everything else about a parameter is derived from its declaration:
/// - ``validate(_:)`` checks keys and values with one set of messages (used by a provider's
///   `setParameters(_:)` and `initialize(options:)` and by the CLI's `--param`);
/// - secret values are wrapped in ``Secret`` so that a description never shows them
///   (``validate(_:)`` returns the parameters that way);
/// - ``commandLineValue(_:_:)`` parses a command-line value and refuses secrets there;
/// - ``table()`` renders the parameters for help text, marking the secret ones.
///
/// A provider declares `static let schema = ProviderParameterSchema(provider: …, [ … ])`; shared
/// parameters (the remote providers' TLS and timeout keys) are declared once as `Parameter` values
/// and listed by every schema that takes them.
public struct ProviderParameterSchema: Sendable {
    /// The type of a parameter's value: an open set of static members.
    public struct ValueType: Sendable, Equatable, CustomStringConvertible {
        enum Storage: Sendable, Equatable {
            case string
            case integer(minimum: Int?)
            case seconds
            case boolean
            case url
            case path
            case choice([String])
            case secret
            case bytes
        }
        let storage: Storage

        /// Text; integers and URLs are accepted in their text form.
        public static let string = ValueType(storage: .string)
        /// A decimal integer.
        public static let integer = ValueType(storage: .integer(minimum: nil))
        /// A decimal integer no smaller than `minimum`.
        public static func integer(atLeast minimum: Int) -> ValueType { ValueType(storage: .integer(minimum: minimum)) }
        /// A positive whole number of seconds (a timeout).
        public static let seconds = ValueType(storage: .seconds)
        /// `true` or `false` (also `yes`/`no`, `on`/`off`, `1`/`0`).
        public static let boolean = ValueType(storage: .boolean)
        /// A URL with a scheme.
        public static let url = ValueType(storage: .url)
        /// A file or directory path (or a `file://` URL): not empty, no NUL byte.
        public static let path = ValueType(storage: .path)
        /// One of a fixed list of words.
        public static func oneOf(_ values: [String]) -> ValueType { ValueType(storage: .choice(values)) }
        /// A password, PIN or token: kept as a ``Secret``, never shown, never taken on a command line.
        public static let secret = ValueType(storage: .secret)
        /// Bytes (``ProviderParameters/Value/data(_:)``); cannot be given as command-line text.
        public static let bytes = ValueType(storage: .bytes)

        /// The words a ``oneOf(_:)`` type allows; empty for other types.
        public var allowedValues: [String] {
            if case .choice(let values) = storage { return values }
            return []
        }

        /// How the type reads in help text: `string`, `integer >= 0`, `seconds`, `a|b|c`, ….
        public var description: String {
            switch storage {
            case .string: return "string"
            case .integer(let minimum?): return "integer >= \(minimum)"
            case .integer(nil): return "integer"
            case .seconds: return "seconds"
            case .boolean: return "boolean"
            case .url: return "URL"
            case .path: return "path"
            case .choice(let values): return values.joined(separator: "|")
            case .secret: return "secret"
            case .bytes: return "bytes"
            }
        }

        /// What a value must be, as error messages say it ("must be …").
        var expectation: String {
            switch storage {
            case .string: return "a string"
            case .integer(let minimum?): return "an integer of at least \(minimum)"
            case .integer(nil): return "an integer"
            case .seconds: return "a positive whole number of seconds"
            case .boolean: return "true or false"
            case .url: return "a URL such as https://host/path"
            case .path: return "a non-empty path"
            case .choice(let values): return "one of \(values.joined(separator: ", "))"
            case .secret: return "a secret (password or PIN)"
            case .bytes: return "non-empty bytes"
            }
        }
    }

    /// One declared parameter.
    public struct Parameter: Sendable {
        /// The key, as written in `--param KEY=VALUE`.
        public let key: ProviderParameters.Key
        /// The type of its value.
        public let type: ValueType
        /// The default as help text shows it (`30`, `v1`, `the host name`), nil when there is none.
        public let defaultValue: String?
        /// One line saying what it is.
        public let summary: String

        /// Whether the value is a secret (a password, PIN or token).
        public var isSecret: Bool { type.storage == .secret }

        /// Declares a parameter.
        /// - Parameters:
        ///   - key: the key.
        ///   - type: the type of its value.
        ///   - defaultValue: the default as help text shows it; nil when there is none.
        ///   - summary: one line saying what it is.
        public init(
            _ key: ProviderParameters.Key,
            _ type: ValueType,
            default defaultValue: String? = nil,
            _ summary: String
        ) {
            self.key = key
            self.type = type
            self.defaultValue = defaultValue
            self.summary = summary
        }
    }

    /// A check over several parameters at once (keys that exclude each other, a value that must
    /// parse as a URI); it throws `.invalidParameter` naming the keys.
    public typealias Rule = @Sendable (ProviderParameters) throws -> Void

    /// The provider whose parameters these are (named in messages).
    public let provider: ProviderID
    /// The parameters, in the order they were declared.
    public let parameters: [Parameter]
    private let rules: [Rule]

    /// Declares a provider's parameters.
    /// - Parameters:
    ///   - provider: the provider's ID.
    ///   - parameters: every parameter it takes, each once.
    ///   - rules: checks over several parameters, run after every single value has been checked.
    public init(provider: ProviderID, _ parameters: [Parameter], rules: [Rule] = []) {
        var seen = Set<ProviderParameters.Key>()
        self.provider = provider
        self.parameters = parameters.filter { seen.insert($0.key).inserted }
        self.rules = rules
    }

    /// Every declared key.
    public var keys: Set<ProviderParameters.Key> { Set(parameters.map(\.key)) }

    /// The keys whose values are secrets.
    public var secretKeys: Set<ProviderParameters.Key> { Set(parameters.filter(\.isSecret).map(\.key)) }

    /// The declaration of `key`, nil when the provider does not take it.
    public subscript(key: ProviderParameters.Key) -> Parameter? { parameters.first { $0.key == key } }

    // MARK: Validation

    /// Checks every key and value, then the rules.
    ///
    /// - Returns: `values` with the values of secret keys wrapped as ``ProviderParameters/Value/secret(_:)``
    ///   (so that no description shows them); other values are returned as given.
    /// - Throws: `.invalidParameter` naming the first unknown key (and listing the known ones) or the
    ///   key whose value does not fit its type (and what the type allows); a secret value is never
    ///   quoted.
    public func validate(_ values: ProviderParameters) throws -> ProviderParameters {
        var result = values
        for key in values.keys {
            guard let parameter = self[key] else { throw unknownKey(key) }
            if let value = values[key] {
                result[key] = try check(value, of: parameter)
            }
        }
        for rule in rules { try rule(result) }
        return result
    }

    /// The value of `--param KEY=TEXT`, typed as `key` is declared.
    /// - Throws: `.invalidParameter` for a key the provider does not take, for a secret key (a secret
    ///   on a command line is visible to every user of the machine; the message names
    ///   `--param-env` and `--param-file`), for a bytes key and for text that does not fit the type.
    public func commandLineValue(_ key: ProviderParameters.Key, _ text: String) throws -> ProviderParameters.Value {
        guard let parameter = self[key] else { throw unknownKey(key) }
        if parameter.isSecret {
            throw CertificateProviderError.invalidParameter(
                "parameter '\(key)' is a secret: --param \(key)=… would put it on the command line; use --param-env "
                    + "\(key)=VAR or --param-file \(key)=PATH"
            )
        }
        if parameter.type.storage == .bytes {
            throw CertificateProviderError.invalidParameter(
                "parameter '\(key)' takes bytes, which a command line cannot give"
            )
        }
        return try check(.string(text), of: parameter)
    }

    /// Checks one value against its declaration; returns it (a secret wrapped).
    private func check(_ value: ProviderParameters.Value, of parameter: Parameter) throws -> ProviderParameters.Value {
        let key = parameter.key
        let single = ProviderParameters([key: value])
        func fail(_ shown: String? = nil) -> CertificateProviderError {
            let not = shown.map { ", not \($0)" } ?? ""
            return .invalidParameter("parameter '\(key)' must be \(parameter.type.expectation)\(not)")
        }
        /// The value as the message may show it: never a secret.
        var shown: String? {
            switch value {
            case .string(let text): return "'\(text)'"
            case .integer, .boolean, .url: return value.description
            case .data, .secret: return nil
            }
        }
        if parameter.type.storage == .url, let text = try? single.string(key) {
            try URLCredentials.check(
                text,
                what: "parameter '\(key)'",
                instead: "give them through the provider's own parameters (secret ones with --param-env KEY=VAR)"
            )
        }
        do {
            switch parameter.type.storage {
            case .string:
                guard try single.string(key) != nil else { throw fail(shown) }
            case .integer(let minimum):
                guard let number = try single.integer(key) else { throw fail(shown) }
                if let minimum, number < minimum { throw fail(shown) }
            case .seconds:
                guard let number = try single.integer(key), number > 0 else { throw fail(shown) }
            case .boolean:
                guard try single.boolean(key) != nil else { throw fail(shown) }
            case .url:
                guard let url = try single.url(key), url.scheme != nil else { throw fail(shown) }
            case .path:
                guard let text = try single.string(key), !text.trimmingCharacters(in: .whitespaces).isEmpty,
                    !text.contains("\u{0}")
                else { throw fail(shown) }
            case .choice(let allowed):
                guard let text = try single.string(key), allowed.contains(text) else { throw fail(shown) }
            case .secret:
                guard let secret = try single.secret(key) else { throw fail() }
                return .secret(secret)
            case .bytes:
                guard let bytes = try single.data(key), !bytes.isEmpty else { throw fail() }
            }
        } catch let error as CertificateProviderError where error.code == .invalidParameter {
            // The typed accessors' own wording is replaced by the schema's one message.
            throw fail(parameter.isSecret ? nil : shown)
        }
        return value
    }

    private func unknownKey(_ key: ProviderParameters.Key) -> CertificateProviderError {
        let known = parameters.map(\.key.rawValue).sorted().joined(separator: ", ")
        return .invalidParameter(
            "parameter '\(key)' is not known to the \(provider) provider (it takes: \(known.isEmpty ? "none" : known))"
        )
    }

    // MARK: Help

    /// The parameters as a text table (`KEY`, `TYPE`, `DEFAULT`, `DESCRIPTION`), in declaration
    /// order; a secret parameter's type reads `secret`, and a line under the table says how secrets
    /// are given.
    public func table() -> String {
        var rows = [["KEY", "TYPE", "DEFAULT", "DESCRIPTION"]]
        rows += parameters.map { [$0.key.rawValue, $0.type.description, $0.defaultValue ?? "-", $0.summary] }
        let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = rows.map { row in
            (0..<3).map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                + "  " + row[3]
        }
        if !secretKeys.isEmpty {
            lines.append("")
            lines.append(
                "secret parameters (\(parameters.filter(\.isSecret).map(\.key.rawValue).joined(separator: ", "))) "
                    + "are never shown and never taken on a command line"
            )
        }
        return lines.joined(separator: "\n")
    }
}
