import Foundation

/// A provider that declares itself, so that registering it is one call of one shape: its ID, its
/// parameters, one line saying what it is, and how to make it from validated parameters and the
/// host's ``ProviderContext``.
///
/// The package's providers conform (each in its folder's `Registration` file) and
/// `BuiltInProviders.all` lists them; an app's own provider may conform the same way. The ID is the
/// provider's own (`extension ProviderID { public static let … }` in its module): the core declares
/// none.
///
/// ```swift
/// var registry = ProviderRegistry()
/// let context = ProviderContext(storeDirectory: URL(fileURLWithPath: "/var/lib/app"))
/// try PKCS12CertificateProvider.register(in: &registry, context: context)
/// ```
public protocol BuiltInProvider: CertificateProvider {
    /// The ID the provider registers under (and reports as `providerID`).
    static var id: ProviderID { get }
    /// The parameters it declares, each once (validation, redaction and help come from here).
    static var schema: ProviderParameterSchema { get }
    /// One line saying what the provider is (`certsign providers`).
    static var summary: String { get }

    /// Makes a provider with `parameters` (already validated against ``schema``) and what it needs of
    /// `context`.
    /// - Throws: `.invalidParameter` for parameters the provider refuses beyond its schema.
    static func make(parameters: ProviderParameters, context: ProviderContext) throws -> Self

    /// The first word of the command-line tool's commands that work with this provider without a
    /// `--provider` option (`dss` for FMP DSS, `csc` for CSC, `tokens` for PKCS#11), or nil when it has
    /// none: errors of those commands get this provider's hints.
    static var commandGroup: String? { get }

    /// A hint for `error` met by `command` with this provider, naming this provider's own options
    /// and commands (`--param-env pin=VAR`, `certsign sessions clear …`), or nil for the tool's
    /// general hints.
    static func commandLineHint(for error: CertificateProviderError, in command: ProviderCommandLine) -> String?

    /// Why this provider cannot serve `command` of a command-line tool (FMP DSS signs resources on
    /// its server, not files: `certsign sign --provider fmp-dss` is refused before anything is read),
    /// or nil when it can.
    static func commandLineRefusal(for command: ProviderCommandLine) -> ProviderCommandRefusal?

    /// The commands this provider adds to a command-line tool (`certsign csc credentials`), each
    /// starting with its ``commandGroup`` word or a word of its own.
    static var commands: [ProviderCommand] { get }

    /// The options this provider adds to a command-line tool's sign command to reach its key without
    /// `--provider` (`--identity ALIAS`, `--p12 FILE`).
    static var keySources: [ProviderKeySource] { get }

    /// What `initialize(options: parameters)` would store (its entry, whether one of that name
    /// exists), or nil when it stores nothing; a tool asks before it signs through `--provider ID`.
    /// - Throws: what reading the store throws.
    static func provisioning(
        for parameters: ProviderParameters,
        context: ProviderContext
    ) throws
        -> ProviderProvisioning?
}

extension BuiltInProvider {
    /// The ID the provider registers under (``id``): a built-in provider reports no other.
    public var providerID: ProviderID { Self.id }

    /// No command group: the provider is used through `--provider ID` only.
    public static var commandGroup: String? { nil }

    /// No hints of its own: the tool's general hints apply.
    public static func commandLineHint(for error: CertificateProviderError, in command: ProviderCommandLine) -> String?
    {
        nil
    }

    /// No commands of its own.
    public static var commands: [ProviderCommand] { [] }

    /// No key sources of its own: the provider is reached through `--provider ID`.
    public static var keySources: [ProviderKeySource] { [] }

    /// Nothing is stored by `initialize(options:)`.
    public static func provisioning(
        for parameters: ProviderParameters,
        context: ProviderContext
    ) throws
        -> ProviderProvisioning?
    {
        nil
    }

    /// No refusal: the provider serves every command that takes `--provider`.
    public static func commandLineRefusal(for command: ProviderCommandLine) -> ProviderCommandRefusal? { nil }

    /// The parameter a ``ProviderContext/storeDirectory`` is given as, to providers that declare it.
    static var storeDirectoryKey: ProviderParameters.Key { "storeDirectory" }

    /// Registers the provider under ``id`` with its ``schema`` and ``summary``; each `makeProvider`
    /// call makes a fresh provider through ``make(parameters:context:)``.
    /// - Parameters:
    ///   - registry: where it is registered.
    ///   - parameters: what every provider it makes starts with; checked against ``schema`` here.
    ///   - context: what the host lends the provider; its `storeDirectory` becomes the
    ///     `storeDirectory` parameter when the schema declares one and `parameters` does not set it.
    /// - Throws: `.providerAlreadyRegistered`; `.invalidParameter` for parameters the schema refuses.
    public static func register(
        in registry: inout ProviderRegistry,
        parameters: ProviderParameters = ProviderParameters(),
        context: ProviderContext = ProviderContext()
    ) throws {
        var parameters = parameters
        if let directory = context.storeDirectory, schema[storeDirectoryKey] != nil,
            parameters[storeDirectoryKey] == nil
        {
            parameters[storeDirectoryKey] = .string(directory.path)
        }
        let validated = try schema.validate(parameters)
        try registry.register(id, description: summary, schema: schema) {
            try make(parameters: validated, context: context)
        }
    }
}
