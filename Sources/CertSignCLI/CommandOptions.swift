import Foundation

/// A command's arguments and options as one typed value: the parser fills it from the command line
/// (converting and checking every value) before the command runs, and usage, `--help`, completion
/// and the man page come from the same bindings' declarations.
///
/// The command body reads only these properties: no option is named by a string there.
protocol CommandOptions: Sendable {
    /// The value before the command line is read: each property holds its default.
    init()
    /// The positional arguments, in order.
    static var arguments: [ArgumentBinding<Self>] { get }
    /// The options, in the order `--help` lists them.
    static var options: [OptionBinding<Self>] { get }
    /// Checks how the values go together (`--out` with one document, one key source, …) once the
    /// whole command line is read, before the command runs.
    /// - Throws: ``InvalidValue`` saying what does not fit (reported as a usage error).
    func validate() throws
}

extension CommandOptions {
    static var arguments: [ArgumentBinding<Self>] { [] }
    static var options: [OptionBinding<Self>] { [] }
    func validate() throws {}
}

/// The options of a command that takes none.
struct NoOptions: CommandOptions {}

/// A value the command line gave that an option or argument does not take. The parser reports it as
/// a ``UsageError`` (exit 64) with the command's usage line.
struct InvalidValue: Error {
    /// What is wrong, naming the option or argument.
    let message: String
}

/// How an option's default appears in help (`(default: …)`).
enum DefaultShown: ExpressibleByStringLiteral {
    /// No default is shown.
    case none
    /// The options value's initial property value (`var port = 0` shows `(default: 0)`).
    case initial
    /// Words for a default the command works out (`the file name without extension`).
    case text(String)

    init(stringLiteral value: String) { self = .text(value) }
}

/// One option bound to a property of a ``CommandOptions`` value: its declaration (for the parser,
/// usage, help, completion and the man page) and how a value given on the command line is converted
/// and stored.
struct OptionBinding<Options: CommandOptions> {
    /// Name, arity, value name, help, type, default, group.
    let declaration: OptionDeclaration
    /// Stores one occurrence (its value; nil for a flag). Throws ``InvalidValue`` for a value the
    /// option does not take.
    let store: (inout Options, String?) throws -> Void
    /// Runs once before the command line is read (secret sources learn their alternatives).
    var prepare: (inout Options) -> Void = { _ in }
}

/// One positional argument bound to a property of a ``CommandOptions`` value.
struct ArgumentBinding<Options: CommandOptions> {
    /// Name, help, arity, type.
    let declaration: ArgumentDeclaration
    /// Converts and stores one argument (appends for a repeating one). Throws ``InvalidValue``.
    let store: (inout Options, String) throws -> Void
}

extension OptionBinding {
    /// A flag (`--attached`).
    static func flag(
        _ keyPath: WritableKeyPath<Options, Bool>,
        _ name: String,
        _ help: String,
        group: String? = nil
    ) -> Self {
        Self(declaration: .flag(name, help, group: group)) { options, _ in options[keyPath: keyPath] = true }
    }

    /// An option with one value, converted when the command line is parsed (the last occurrence wins).
    static func value<Value>(
        _ keyPath: WritableKeyPath<Options, Value>,
        _ name: String,
        _ valueName: String,
        _ help: String,
        type: OptionDeclaration.ValueType = .text,
        required: Bool = false,
        default shown: DefaultShown = .none,
        group: String? = nil,
        convert: @escaping (String) throws -> Value
    ) -> Self {
        Self(
            declaration: .value(
                name,
                valueName,
                help,
                type: type,
                required: required,
                default: shown.text(Options()[keyPath: keyPath]),
                group: group
            )
        ) { options, text in options[keyPath: keyPath] = try convert(text ?? "") }
    }

    /// An option with one text value.
    static func value(
        _ keyPath: WritableKeyPath<Options, String?>,
        _ name: String,
        _ valueName: String,
        _ help: String,
        type: OptionDeclaration.ValueType = .text,
        required: Bool = false,
        default shown: DefaultShown = .none,
        group: String? = nil
    ) -> Self {
        value(keyPath, name, valueName, help, type: type, required: required, default: shown, group: group) { $0 }
    }

    /// An option with one text value and a default (the property's initial value).
    static func value(
        _ keyPath: WritableKeyPath<Options, String>,
        _ name: String,
        _ valueName: String,
        _ help: String,
        type: OptionDeclaration.ValueType = .text,
        default shown: DefaultShown = .initial
    ) -> Self {
        value(keyPath, name, valueName, help, type: type, default: shown) { $0 }
    }

    /// A whole number in `range` (checked when the command line is parsed).
    static func integer<Value>(
        _ keyPath: WritableKeyPath<Options, Value>,
        _ name: String,
        _ valueName: String,
        _ help: String,
        in range: ClosedRange<Int>,
        required: Bool = false,
        default shown: DefaultShown = .none,
        convert: @escaping (Int) -> Value
    ) -> Self {
        value(keyPath, name, valueName, help, type: .integer(range), required: required, default: shown) { text in
            // The declared type was checked first; this only converts.
            guard let number = Int(text) else { throw InvalidValue(message: "\(name) must be a whole number") }
            return convert(number)
        }
    }

    /// One word of a closed set, as an enumeration (the words are its raw values, in case order).
    static func choice<Value: RawRepresentable & CaseIterable>(
        _ keyPath: WritableKeyPath<Options, Value>,
        _ name: String,
        _ valueName: String,
        _ help: String,
        default shown: DefaultShown = .initial
    ) -> Self where Value.RawValue == String {
        let words = Value.allCases.map(\.rawValue)
        return value(keyPath, name, valueName, help, type: .choice(words), default: shown) { text in
            guard let value = Value(rawValue: text) else {
                throw InvalidValue(message: "unknown \(name) '\(text)' (\(Help.alternatives(words)))")
            }
            return value
        }
    }

    /// An option that may be given several times; the values are kept in order.
    static func repeatable<Element>(
        _ keyPath: WritableKeyPath<Options, [Element]>,
        _ name: String,
        _ valueName: String,
        _ help: String,
        type: OptionDeclaration.ValueType = .text,
        convert: @escaping (String) throws -> Element
    ) -> Self {
        Self(declaration: .repeatable(name, valueName, help, type: type)) { options, text in
            options[keyPath: keyPath].append(try convert(text ?? ""))
        }
    }

    /// A repeatable text option.
    static func repeatable(
        _ keyPath: WritableKeyPath<Options, [String]>,
        _ name: String,
        _ valueName: String,
        _ help: String,
        type: OptionDeclaration.ValueType = .text
    ) -> Self {
        repeatable(keyPath, name, valueName, help, type: type) { $0 }
    }
}

/// The option families that declare several options at once (secret sources, provider parameters).
extension Array {
    /// `--<stem>-env VAR`, `--<stem>-file PATH` (and `--<stem>-stdin` when `standardInput`): where
    /// one secret comes from, never the secret (see ``SecretInput``).
    static func secretSources<Options: CommandOptions>(
        _ keyPath: WritableKeyPath<Options, SecretInput>,
        _ stem: String,
        _ what: String,
        standardInput: Bool = false
    ) -> Self where Element == OptionBinding<Options> {
        let declarations = OptionDeclaration.secretSources(stem, what, standardInput: standardInput)
        let alternatives = declarations.map(\.synopsis)
        return declarations.map { declaration in
            let name = declaration.name
            return OptionBinding(
                declaration: declaration,
                store: { options, text in
                    let source: SecretInput.Source =
                        switch name {
                        case "--\(stem)-env": .environment(variable: text ?? "")
                        case "--\(stem)-file": .file(path: text ?? "")
                        default: .standardInput
                        }
                    options[keyPath: keyPath].give(source)
                },
                prepare: { options in options[keyPath: keyPath] = SecretInput(stem: stem, alternatives: alternatives) }
            )
        }
    }

    /// `--password-env`, `--password-file`, `--password-stdin`.
    static func password<Options: CommandOptions>(
        _ keyPath: WritableKeyPath<Options, SecretInput>,
        _ what: String
    ) -> Self where Element == OptionBinding<Options> {
        secretSources(keyPath, "password", what, standardInput: true)
    }

    /// `--param KEY=VALUE`, `--param-env KEY=VAR`, `--param-file KEY=PATH` (see ``ProviderParameterInput``).
    static func providerParameters<Options: CommandOptions>(
        _ keyPath: WritableKeyPath<Options, ProviderParameterInput>
    ) -> Self where Element == OptionBinding<Options> {
        let lists: [WritableKeyPath<ProviderParameterInput, [ProviderParameterInput.Item]>] = [
            \.values, \.environment, \.files,
        ]
        return zip(OptionDeclaration.providerParameters, lists).map { declaration, list in
            OptionBinding(declaration: declaration) { options, text in
                // The parser checked KEY=VALUE.
                let text = text ?? ""
                let equals = text.firstIndex(of: "=") ?? text.endIndex
                let value = equals == text.endIndex ? "" : String(text[text.index(after: equals)...])
                options[keyPath: keyPath.appending(path: list)].append(
                    .init(key: String(text[..<equals]), value: value)
                )
            }
        }
    }
}

extension ArgumentBinding {
    /// One argument, converted when the command line is parsed.
    static func one<Value>(
        _ keyPath: WritableKeyPath<Options, Value>,
        _ name: String,
        _ help: String,
        type: OptionDeclaration.ValueType = .text,
        convert: @escaping (String) throws -> Value
    ) -> Self {
        Self(declaration: ArgumentDeclaration(name: name, help: help, valueType: type)) { options, text in
            options[keyPath: keyPath] = try convert(text)
        }
    }

    /// One text argument.
    static func one(
        _ keyPath: WritableKeyPath<Options, String>,
        _ name: String,
        _ help: String,
        type: OptionDeclaration.ValueType = .text
    ) -> Self {
        one(keyPath, name, help, type: type) { $0 }
    }

    /// One or more text arguments (`DOCUMENT...`), in order.
    static func many(
        _ keyPath: WritableKeyPath<Options, [String]>,
        _ name: String,
        _ help: String,
        type: OptionDeclaration.ValueType = .text
    ) -> Self {
        Self(declaration: ArgumentDeclaration(name: name, help: help, repeats: true, valueType: type)) {
            options,
            text in
            options[keyPath: keyPath].append(text)
        }
    }
}

extension DefaultShown {
    /// The text `--help` shows for a property whose initial value is `initial`.
    func text(_ initial: Any) -> String? {
        switch self {
        case .none: return nil
        case .text(let text): return text
        case .initial:
            if let word = initial as? any RawRepresentable { return "\(word.rawValue)" }
            return "\(initial)"
        }
    }
}

/// Where a secret comes from, as the command line said (`--password-env VAR`, `--password-file PATH`,
/// `--password-stdin`): a variable's name or a file's path, never the secret. ``CommandContext``'s
/// secret reader reads it.
struct SecretInput: Sendable, Equatable {
    /// One place a secret may come from.
    enum Source: Sendable, Equatable {
        /// The environment variable of this name.
        case environment(variable: String)
        /// The first line of the file at this path.
        case file(path: String)
        /// The first line of standard input.
        case standardInput

        /// When several are given: the variable, else the file, else standard input.
        var precedence: Int {
            switch self {
            case .environment: 0
            case .file: 1
            case .standardInput: 2
            }
        }
    }

    /// The option stem (`password`, `store-password`).
    var stem = ""
    /// The options that can give it (`--password-env VAR`, …), for the message when it is missing.
    var alternatives: [String] = []
    /// Every source the command line gave, in order.
    var given: [Source] = []

    /// The source to read: the variable wins over the file, the file over standard input, and of the
    /// same kind the last one given. Nil when none was given.
    var source: Source? {
        given.enumerated().min { ($0.element.precedence, -$0.offset) < ($1.element.precedence, -$1.offset) }?.element
    }

    /// Whether the command line named a source.
    var isGiven: Bool { !given.isEmpty }

    /// Whether `--<stem>-stdin` was given (standard input is then not free for anything else).
    var readsStandardInput: Bool { given.contains(.standardInput) }

    /// The variable of `--<stem>-env`.
    var environmentVariable: String? {
        if case .environment(let variable) = source { return variable }
        return nil
    }

    /// The path of `--<stem>-file`.
    var filePath: String? {
        if case .file(let path) = source { return path }
        return nil
    }

    /// Records a source the command line gave.
    mutating func give(_ new: Source) { given.append(new) }
}

/// A provider's parameters as the command line gave them: `--param KEY=VALUE` (checked by the
/// provider's schema, which refuses secrets there), `--param-env KEY=VAR` and `--param-file KEY=PATH`.
struct ProviderParameterInput: Sendable, Equatable {
    /// `KEY=VALUE`, split at the first `=`.
    struct Item: Sendable, Equatable {
        /// The parameter key.
        var key: String
        /// The value, the variable's name or the file's path.
        var value: String
    }

    /// `--param`, in order.
    var values: [Item] = []
    /// `--param-env`, in order.
    var environment: [Item] = []
    /// `--param-file`, in order.
    var files: [Item] = []

    /// Whether none was given.
    var isEmpty: Bool { values.isEmpty && environment.isEmpty && files.isEmpty }
}
