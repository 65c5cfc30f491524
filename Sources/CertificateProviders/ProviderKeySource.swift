import Foundation

/// A way a provider offers to reach its key from a command-line tool's sign command without
/// `--provider ID --param …`: one option (`--identity ALIAS`, `--p12 FILE`) whose value, with the
/// password the user gave, becomes the parameters the provider is made with. The tool lists the
/// option beside `--provider` and names no provider itself.
///
/// A provider lists its key sources in ``BuiltInProvider/keySources``.
public struct ProviderKeySource: Sendable {
    /// The option, without dashes (`identity`).
    public var name: String
    /// What its value is called in usage (`ALIAS`).
    public var placeholder: String
    /// One line of help, saying what the password is for this source.
    public var summary: String
    /// What the value is, for completion and checking (`.file` for a file).
    public var type: ProviderCommand.Option.ValueType
    /// Checks the value when the command line is read.
    /// - Throws: `ProviderCommand.UsageError` naming what is wrong (a usage error of the command).
    public var check: @Sendable (String) throws -> Void
    /// Turns the value into the provider's parameters (reading the password when it needs it).
    public var configure: @Sendable (Request) throws -> Configuration

    /// Creates a key source.
    public init(
        name: String,
        placeholder: String,
        summary: String,
        type: ProviderCommand.Option.ValueType = .text,
        check: @escaping @Sendable (String) throws -> Void = { _ in },
        configure: @escaping @Sendable (Request) throws -> Configuration
    ) {
        self.name = name
        self.placeholder = placeholder
        self.summary = summary
        self.type = type
        self.check = check
        self.configure = configure
    }

    /// What the tool hands ``configure``.
    public struct Request: Sendable {
        /// The option's value (already checked by ``check``).
        public var value: String
        /// What the host lends every provider (the store directory above all).
        public var context: ProviderContext
        /// Reads the password the user gave for the key (`--password-env`, `--password-file`,
        /// `--password-stdin`); when none was given and `prompt` is set the tool asks on its terminal.
        /// With `isRequired`, a password that is not given is an error (`.passwordRequired`);
        /// else the answer is nil.
        public var password: @Sendable (_ prompt: String?, _ isRequired: Bool) throws -> Secret?

        /// Creates a request.
        public init(
            value: String,
            context: ProviderContext = ProviderContext(),
            password: @escaping @Sendable (_ prompt: String?, _ isRequired: Bool) throws -> Secret? = { _, _ in nil }
        ) {
            self.value = value
            self.context = context
            self.password = password
        }
    }

    /// The parameters the provider is made with.
    public struct Configuration: Sendable {
        /// What the registered provider starts with (``BuiltInProvider/register(in:parameters:context:)``):
        /// what `storedCertificate()` reads.
        public var registration: ProviderParameters
        /// What `initialize(options:)` is given when no stored identity serves.
        public var initialization: ProviderParameters

        /// Creates a configuration.
        public init(
            registration: ProviderParameters = ProviderParameters(),
            initialization: ProviderParameters = ProviderParameters()
        ) {
            self.registration = registration
            self.initialization = initialization
        }
    }
}

/// What a provider stores when `initialize(options:)` provisions it (SAP's contract: a PKCS#12 file
/// given as a parameter is stored under its alias), so that a tool can refuse to replace an entry
/// and say where the new one went.
public struct ProviderProvisioning: Sendable {
    /// Whether an entry of that name is stored already (the tool then refuses unless told to replace).
    public var replacesEntry: Bool
    /// Why the tool refuses when ``replacesEntry`` (naming the entry and how to choose another).
    public var refusal: String
    /// What the tool tells the user once the identity is stored (where it went, how to use it again).
    public var storedNote: @Sendable (SigningIdentity) -> String

    /// Creates a provisioning.
    public init(
        replacesEntry: Bool,
        refusal: String,
        storedNote: @escaping @Sendable (SigningIdentity) -> String
    ) {
        self.replacesEntry = replacesEntry
        self.refusal = refusal
        self.storedNote = storedNote
    }
}
