/// An abstraction for "where do my signing certificate and key come from": SAP's Objective-C
/// `CertificateProvider` protocol (SAP Mobile Platform / Kapsel), in Swift.
///
/// There are two flows, and a provider may offer either or both:
/// - the asynchronous flow, ``initialize(options:)``, acquires an identity by whatever means the
///   provider needs (import a file, authenticate to a server, ask the user);
/// - the synchronous flow, ``storedCertificate()``, returns an identity kept from earlier without
///   any interaction.
///
/// A provider that implements both returns from ``storedCertificate()`` the identity that the last
/// successful ``initialize(options:)`` acquired. As in SAP's header every method but
/// ``providerID`` is optional: the defaults in the protocol extension throw `.unsupportedOperation`
/// (or return empty parameters). A provider that keeps its parameters and identity in a
/// ``CertificateProviderState`` value answers ``heldState`` with it instead, and the defaults of
/// ``parameters``, ``setParameters(_:)``, ``storedCertificate()`` and ``deleteStoredCertificate()``
/// answer from that value: a conformance chooses ``heldState`` once, where it is declared, so a
/// caller that sees only this module still reaches the provider's own state, never an empty default.
///
/// The meaning of options and parameters is provider-specific: each provider declares its keys once,
/// in a ``ProviderParameterSchema`` it registers with (``ProviderRegistry/register(_:description:schema:factory:)``).
/// Parameters are validated through that schema at the moment they are handed to the provider, the
/// same way at each of the three places: a provider's initializer that takes parameters throws on a
/// bad one (so does its `register(in:)`), ``setParameters(_:)`` refuses a bad value and keeps the
/// previous parameters, and ``initialize(options:)`` refuses bad options before any file, token or
/// network is touched. All three throw the schema's `.invalidParameter` message naming the key; a
/// parameter is never first found wrong at first use.
/// Providers are reference types shared across tasks, so they must be `Sendable` and do their own
/// locking.
public protocol CertificateProvider: AnyObject, Sendable {
    /// The unique ID of this provider (SAP `getProviderID`); reverse-DNS form for third parties.
    var providerID: ProviderID { get }

    /// Acquires a signing identity (SAP `initialize:withCompletion:`).
    ///
    /// Whatever the provider needs (a file, credentials, a server round trip) happens here. A
    /// provider that stores identities keeps the result, so that ``storedCertificate()`` returns it
    /// afterwards.
    ///
    /// - Parameter options: provider-specific values; merged over the provider's ``parameters``.
    /// - Returns: the acquired identity.
    /// - Throws: `CertificateProviderError`: `.invalidParameter` for bad options, `.wrongPassword`,
    ///   `.authenticationFailed`, `.network`, … as the provider documents.
    func initialize(options: ProviderParameters) async throws -> SigningIdentity

    /// The locally stored identity (SAP `getStoredCertificate:error:`).
    ///
    /// Never prompts and never goes to the network for the certificate itself. Returns `nil` when
    /// nothing is stored.
    /// - Throws: when something is stored but cannot be read (`.wrongPassword`,
    ///   `.passwordRequired`, `.storeCorrupted`).
    func storedCertificate() throws -> SigningIdentity?

    /// Deletes the locally stored identity (SAP `deleteStoredCertificateWithError:`).
    ///
    /// Succeeds, doing nothing, when nothing is stored.
    /// - Throws: when something is stored and removing it fails.
    func deleteStoredCertificate() throws

    /// The provider's current parameters (SAP `getParameters`): what the caller may cache and hand
    /// back later through ``setParameters(_:)`` or ``initialize(options:)``.
    var parameters: ProviderParameters { get }

    /// Replaces the provider's parameters (SAP `setParameters:failedWithError:`).
    /// - Throws: `.invalidParameter` naming the key when a value is rejected; on error the previous
    ///   parameters stay in force.
    func setParameters(_ parameters: ProviderParameters) throws

    /// The value that keeps this provider's parameters and stored identity, or nil (the default): the
    /// defaults of the four members above answer from it when it is set.
    var heldState: (any CertificateProviderState)? { get }
}

/// What a provider keeps its parameters and the identity of its last ``CertificateProvider/initialize(options:)``
/// in, when it keeps them in one value (the remote providers' `RemoteProviderState`): the provider
/// returns it from ``CertificateProvider/heldState`` and the protocol's defaults answer from it.
public protocol CertificateProviderState: AnyObject, Sendable {
    /// The current parameters (``CertificateProvider/parameters``).
    var parameters: ProviderParameters { get }

    /// Replaces the parameters (``CertificateProvider/setParameters(_:)``).
    /// - Throws: `.invalidParameter` naming the key; on error the previous parameters stay in force.
    func setParameters(_ parameters: ProviderParameters) throws

    /// The identity kept (``CertificateProvider/storedCertificate()``), or nil.
    /// - Throws: when something is kept but cannot be read.
    func storedCertificate() throws -> SigningIdentity?

    /// Forgets the kept identity (``CertificateProvider/deleteStoredCertificate()``).
    /// - Throws: when something is kept and removing it fails.
    func deleteStoredCertificate() throws
}

extension CertificateProvider {
    /// Default: throws ``CertificateProviderError/Code/unsupportedOperation``.
    public func initialize(options: ProviderParameters) async throws -> SigningIdentity {
        throw CertificateProviderError.unsupportedOperation(
            "provider '\(providerID)' does not support initialize(options:)"
        )
    }

    /// Default: none; the other defaults then keep nothing.
    public var heldState: (any CertificateProviderState)? { nil }

    /// Default: the ``heldState``'s identity; without one, throws
    /// ``CertificateProviderError/Code/unsupportedOperation``.
    public func storedCertificate() throws -> SigningIdentity? {
        if let heldState { return try heldState.storedCertificate() }
        throw CertificateProviderError.unsupportedOperation("provider '\(providerID)' does not store certificates")
    }

    /// Default: forgets the ``heldState``'s identity; without one, throws
    /// ``CertificateProviderError/Code/unsupportedOperation``.
    public func deleteStoredCertificate() throws {
        if let heldState { return try heldState.deleteStoredCertificate() }
        throw CertificateProviderError.unsupportedOperation(
            "provider '\(providerID)' does not support deleting stored certificates"
        )
    }

    /// Default: the ``heldState``'s parameters; without one, no parameters.
    public var parameters: ProviderParameters { heldState?.parameters ?? ProviderParameters() }

    /// Default: replaces the ``heldState``'s parameters; without one, throws
    /// ``CertificateProviderError/Code/unsupportedOperation``.
    public func setParameters(_ parameters: ProviderParameters) throws {
        if let heldState { return try heldState.setParameters(parameters) }
        throw CertificateProviderError.unsupportedOperation("provider '\(providerID)' takes no parameters")
    }
}
