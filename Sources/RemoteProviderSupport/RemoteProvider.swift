public import CertificateProviders
internal import Foundation
public import HTTPClient

/// A remote provider (FMP, CryptoPro, CSC, Vault transit, AWS KMS and the next) built on one
/// ``RemoteProviderState``: conforming gives it `make`, its public initializers
/// (``init(parameters:transport:clientIdentityLookup:warning:)`` and the one with test headers) and
/// ``certifiedIdentity(options:missing:makeKey:)``, so the provider writes only what is its own (its
/// module re-exports this one, so that an app importing the provider alone reaches them).
///
/// Its ``RemoteProviderState`` is the provider's `heldState`, so `CertificateProvider`'s own defaults
/// of `parameters`, `setParameters(_:)`, `storedCertificate()` and `deleteStoredCertificate()` answer
/// from it, whatever module the caller imports: the provider writes none of the four unless it keeps
/// more than the identity in memory (a provider that keeps identities on disk answers
/// `storedCertificate()` itself). A provider that keeps more (a session) says what a change of
/// parameters drops in ``parametersChanged(_:)``. Initializers of its own (AWS KMS takes an
/// environment) call ``makeState(base:parameters:kept:)``.
public protocol RemoteProvider: BuiltInProvider {
    /// What the provider keeps besides its parameters and identity (`Void` for nothing).
    associatedtype Kept: Sendable

    /// The provider's state and base.
    var remote: RemoteProviderState<Kept> { get }

    /// What a new provider keeps before its first call.
    static var initialKept: Kept { get }

    /// Makes the provider around `remote` (the initializer below calls it).
    init(remote: RemoteProviderState<Kept>)

    /// Drops, under the lock, what the new `value.parameters` no longer serve (default: the identity).
    static func parametersChanged(_ value: inout RemoteProviderState<Kept>.Value)

    /// The provider's command-line hints as a table, which `commandLineHint(for:in:)` answers from
    /// (default nil: the tool's general hints, unless the provider writes `commandLineHint` itself).
    static var commandLineHints: RemoteCommandLineHints? { get }
}

extension RemoteProvider where Kept == Void {
    /// Nothing.
    public static var initialKept: Void { () }
}

extension RemoteProvider {
    /// Creates a provider that sends `additionalHeaders` with every request (tests send the emulator's
    /// fault header; the provider's public initializers send none).
    /// - Parameters:
    ///   - parameters: initial parameters, checked against the schema here as by `setParameters(_:)`.
    ///   - transport: the networking; nil uses a ``CurlTransport`` (with `trustedCAFile` and
    ///     `clientIdentity` when set).
    ///   - clientIdentityLookup: opens the `clientIdentity` parameter's alias (nil: that parameter is
    ///     refused).
    ///   - warning: called with a message when a kept session file is ignored (foreign-owned, readable
    ///     by others, damaged); providers that keep no file never call it.
    ///   - clock: the time tokens and kept sessions are judged against (default the wall clock; a test
    ///     passes its own to look at a session at a chosen moment of its life).
    /// - Throws: `.invalidParameter` naming an unknown key or a value of the wrong type (the same check
    ///   and message as `setParameters(_:)` and `initialize(options:)`).
    public init(
        parameters: ProviderParameters = ProviderParameters(),
        transport: (any HTTPTransport)? = nil,
        additionalHeaders: [(name: String, value: String)],
        clientIdentityLookup: ClientIdentityLookup? = nil,
        warning: (@Sendable (String) -> Void)? = nil,
        clock: SessionClock = .system
    ) throws {
        let base = RemoteProviderBase(
            schema: Self.schema,
            transport: transport,
            additionalHeaders: additionalHeaders,
            clientIdentityLookup: clientIdentityLookup,
            warning: warning,
            clock: clock
        )
        self.init(remote: try Self.makeState(base: base, parameters: parameters, kept: Self.initialKept))
    }

    /// Creates a provider, the way an app does: no extra headers, the wall clock.
    /// - Parameters:
    ///   - parameters: initial parameters, checked against the schema here as by `setParameters(_:)`.
    ///   - transport: the networking; nil uses a ``CurlTransport`` (with `trustedCAFile` and
    ///     `clientIdentity` when set).
    ///   - clientIdentityLookup: opens the `clientIdentity` parameter's alias (default nil: that
    ///     parameter is refused).
    ///   - warning: called with a message when a kept session file is ignored (foreign-owned, readable
    ///     by others, not a regular file, damaged); default none. Providers that keep no file never
    ///     call it.
    /// - Throws: `.invalidParameter` naming an unknown key or a value of the wrong type (the same check
    ///   and message as `setParameters(_:)` and `initialize(options:)`).
    public init(
        parameters: ProviderParameters = ProviderParameters(),
        transport: (any HTTPTransport)? = nil,
        clientIdentityLookup: ClientIdentityLookup? = nil,
        warning: (@Sendable (String) -> Void)? = nil
    ) throws {
        try self.init(
            parameters: parameters,
            transport: transport,
            additionalHeaders: [],
            clientIdentityLookup: clientIdentityLookup,
            warning: warning
        )
    }

    /// Makes a provider with `parameters` (validated) and the context's `clientIdentityLookup` and
    /// `warning`; it talks to its server through a ``CurlTransport`` made from the TLS parameters.
    /// - Throws: `.invalidParameter` naming an unknown key or a value of the wrong type.
    public static func make(parameters: ProviderParameters, context: ProviderContext) throws -> Self {
        try Self(parameters: parameters, clientIdentityLookup: context.clientIdentityLookup, warning: context.warning)
    }

    /// The state of a provider of this type: `parameters` checked against `base`'s schema, and
    /// ``parametersChanged(_:)`` run when they are replaced (what a provider's own initializers that
    /// do not go through the one above make their `remote` with).
    /// - Throws: `.invalidParameter` naming an unknown key or a value of the wrong type.
    public static func makeState(
        base: RemoteProviderBase,
        parameters: ProviderParameters,
        kept: Kept
    ) throws -> RemoteProviderState<Kept> {
        try RemoteProviderState(base: base, parameters: parameters, kept: kept) { Self.parametersChanged(&$0) }
    }

    /// No table of hints.
    public static var commandLineHints: RemoteCommandLineHints? { nil }

    /// The hint ``commandLineHints`` has for `error`, or nil.
    public static func commandLineHint(for error: CertificateProviderError, in command: ProviderCommandLine) -> String?
    {
        commandLineHints?.hint(for: error)
    }

    /// The provider's ``RemoteProviderState``, which `CertificateProvider`'s defaults answer from.
    public var heldState: (any CertificateProviderState)? { remote }

    /// The transport, headers, TLS identity lookup and warning callback every remote provider holds.
    public var base: RemoteProviderBase { remote.base }

    /// Forgets the identity made with the old parameters (``RemoteProviderState/setParameters(_:)``
    /// calls it under the lock).
    public static func parametersChanged(_ value: inout RemoteProviderState<Kept>.Value) {
        value.identity = nil
    }

    /// `initialize(options:)` of a provider whose user gives the key's certificate: reads the
    /// `certificate` parameter's file (the leaf, then its chain), makes the key with `makeKey` (which
    /// checks that the leaf certifies it), and keeps and returns the identity.
    /// - Parameter missing: the reason when `certificate` is not set (say how to get one).
    /// - Throws: `.invalidParameter` for an unset or unreadable `certificate`; what `makeKey` throws.
    public func certifiedIdentity(
        options: ProviderParameters,
        missing: String,
        makeKey: (ProviderParameters, Certificate) async throws -> any SigningKey
    ) async throws -> SigningIdentity {
        let merged = try remote.merged(options)
        guard let path = try merged.string("certificate"), !path.isEmpty else {
            throw CertificateProviderError.invalidParameter(missing)
        }
        let certificates = try Self.readCertificates(path)
        let key = try await makeKey(merged, certificates[0])
        return remote.remember(
            SigningIdentity(certificate: certificates[0], chain: Array(certificates.dropFirst()), key: key)
        )
    }

    /// The certificates of the PEM (or DER) file at `path`: the leaf first.
    /// - Throws: `.invalidParameter` when the file cannot be read or holds no certificate.
    static func readCertificates(_ path: String) throws -> [Certificate] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CertificateProviderError.invalidParameter(
                "parameter 'certificate': the file '\(path)' cannot be read"
            )
        }
        let certificates: [Certificate]
        do {
            certificates = try Certificate.certificates(derOrPEM: Array(data))
        } catch let error as CertificateProviderError {
            throw CertificateProviderError.invalidParameter(
                "parameter 'certificate': '\(path)' holds no readable certificate (\(error.reason))"
            )
        }
        guard !certificates.isEmpty else {
            throw CertificateProviderError.invalidParameter("parameter 'certificate': '\(path)' holds no certificate")
        }
        return certificates
    }
}
