/// One option of a command, declared once: the parser, the usage line, `--help`, shell completion and
/// the man page are all generated from it.
struct OptionDeclaration: Sendable {
    /// How the option takes values.
    enum Arity: Sendable, Equatable {
        /// No value (`--attached`).
        case flag
        /// One value; the last occurrence wins (`--out FILE`).
        case single
        /// Any number of occurrences, kept in order (`--ca FILE`).
        case repeatable
    }

    /// The type of the value: checked when the command line is parsed, and used by completion.
    enum ValueType: Sendable, Equatable {
        /// Free text.
        case text
        /// A file path (`-` may mean standard input or output where the help says so).
        case file
        /// A directory path.
        case directory
        /// A whole number in a range.
        case integer(ClosedRange<Int>)
        /// An http:// or https:// URL.
        case url
        /// The name of an environment variable.
        case environmentVariable
        /// One of these words.
        case choice([String])
        /// `KEY=VALUE` (provider parameters).
        case keyValue
    }

    /// `--out`.
    let name: String
    /// Flag, one value or repeatable.
    let arity: Arity
    /// What the value is called in usage and help (`FILE`).
    let valueName: String
    /// One line (or a few) for `--help` and the man page.
    let help: String
    /// The value's type.
    var valueType: ValueType = .text
    /// Whether the command cannot run without it.
    var isRequired = false
    /// The default, shown in help (the command applies it).
    var defaultValue: String?
    /// Whether the value names where a secret comes from (a variable or a file), never the secret itself.
    var namesSecretSource = false
    /// Options of the same group are alternatives: the usage line shows them as `[a | b]`.
    var group: String?

    /// A flag.
    static func flag(_ name: String, _ help: String, group: String? = nil) -> OptionDeclaration {
        OptionDeclaration(name: name, arity: .flag, valueName: "", help: help, group: group)
    }

    /// An option with one value.
    static func value(
        _ name: String,
        _ valueName: String,
        _ help: String,
        type: ValueType = .text,
        required: Bool = false,
        default defaultValue: String? = nil,
        group: String? = nil
    ) -> OptionDeclaration {
        OptionDeclaration(
            name: name,
            arity: .single,
            valueName: valueName,
            help: help,
            valueType: type,
            isRequired: required,
            defaultValue: defaultValue,
            group: group
        )
    }

    /// An option that may be given several times.
    static func repeatable(
        _ name: String,
        _ valueName: String,
        _ help: String,
        type: ValueType = .text
    ) -> OptionDeclaration {
        OptionDeclaration(name: name, arity: .repeatable, valueName: valueName, help: help, valueType: type)
    }

    /// `--<stem>-env VAR` and `--<stem>-file PATH` (and `--<stem>-stdin` when `standardInput`): the
    /// places one secret may come from. A secret file holds the secret on its first line (see
    /// ``SecretReader``).
    static func secretSources(_ stem: String, _ what: String, standardInput: Bool = false) -> [OptionDeclaration] {
        var options = [
            OptionDeclaration(
                name: "--\(stem)-env",
                arity: .single,
                valueName: "VAR",
                help: "read \(what) from the environment variable VAR",
                valueType: .environmentVariable,
                namesSecretSource: true,
                group: stem
            ),
            OptionDeclaration(
                name: "--\(stem)-file",
                arity: .single,
                valueName: "PATH",
                help: "read \(what) from the first line of the file PATH",
                valueType: .file,
                namesSecretSource: true,
                group: stem
            ),
        ]
        if standardInput {
            options.append(
                OptionDeclaration(
                    name: "--\(stem)-stdin",
                    arity: .flag,
                    valueName: "",
                    help: "read \(what) from standard input (its first line)",
                    namesSecretSource: true,
                    group: stem
                )
            )
        }
        return options
    }

    /// `--password-env`, `--password-file`, `--password-stdin`.
    static func password(_ what: String) -> [OptionDeclaration] {
        secretSources("password", what, standardInput: true)
    }

    /// `--param`, `--param-env`, `--param-file`: a provider's parameters (secrets only through the last two).
    static let providerParameters: [OptionDeclaration] = [
        .repeatable(
            "--param",
            "KEY=VALUE",
            "a provider parameter ('certsign providers --params ID' lists them); never a secret",
            type: .keyValue
        ),
        OptionDeclaration(
            name: "--param-env",
            arity: .repeatable,
            valueName: "KEY=VAR",
            help: "a provider parameter (secrets too) from the environment variable VAR",
            valueType: .keyValue,
            namesSecretSource: true
        ),
        OptionDeclaration(
            name: "--param-file",
            arity: .repeatable,
            valueName: "KEY=PATH",
            help: "a provider parameter (secrets too) from the first line of the file PATH",
            valueType: .keyValue,
            namesSecretSource: true
        ),
    ]

    /// `--out FILE` in usage, `--attached` for a flag.
    var synopsis: String { arity == .flag ? name : "\(name) \(valueName)" }
}

/// One positional argument of a command.
struct ArgumentDeclaration: Sendable {
    /// `DOCUMENT`.
    let name: String
    /// One line for `--help`.
    let help: String
    /// Whether several may be given (`DOCUMENT...`).
    var repeats = false
    /// Whether it may be left out.
    var isOptional = false
    /// Its type, for completion.
    var valueType: OptionDeclaration.ValueType = .text

    /// `DOCUMENT...`, `[ALIAS]`.
    var synopsis: String {
        let text = repeats ? "\(name)..." : name
        return isOptional ? "[\(text)]" : text
    }
}
