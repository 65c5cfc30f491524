public import CertificateProviders
public import Foundation
public import HTTPClient

/// What every remote provider (FMP, CryptoPro, CSC and the next) holds besides its own state, and the
/// steps each takes the same way: validating parameters against its schema, reading the endpoint
/// (URL and endpoint policy), making the transport with the TLS parameters, and finding the
/// directory it keeps sessions in.
///
/// A provider keeps one as a `let` and its own `Mutex` for what changes (parameters, identity,
/// session).
public struct RemoteProviderBase: Sendable {
    /// The provider's parameter schema.
    public let schema: ProviderParameterSchema
    /// The app's transport, or nil: the provider makes a ``CurlTransport`` for each client.
    public let transport: (any HTTPTransport)?
    /// Headers sent with every request (tests send the emulator's fault header).
    public let additionalHeaders: [(name: String, value: String)]
    /// Opens the `clientIdentity` parameter's alias; nil refuses that parameter.
    public let clientIdentityLookup: ClientIdentityLookup?
    /// Told when a kept file is ignored; nil says nothing.
    public let warning: (@Sendable (String) -> Void)?
    /// The time tokens and kept sessions are judged against (``SessionClock/system`` unless a test
    /// passes its own).
    public let clock: SessionClock

    /// Creates the base; see the properties.
    public init(
        schema: ProviderParameterSchema,
        transport: (any HTTPTransport)?,
        additionalHeaders: [(name: String, value: String)] = [],
        clientIdentityLookup: ClientIdentityLookup?,
        warning: (@Sendable (String) -> Void)? = nil,
        clock: SessionClock = .system
    ) {
        self.schema = schema
        self.transport = transport
        self.additionalHeaders = additionalHeaders
        self.clientIdentityLookup = clientIdentityLookup
        self.warning = warning
        self.clock = clock
    }

    /// `parameters` checked against the schema (the one check of init, `setParameters` and
    /// `initialize(options:)`).
    /// - Throws: `.invalidParameter` naming the key.
    public func validate(_ parameters: ProviderParameters) throws -> ProviderParameters {
        try schema.validate(parameters)
    }

    /// The server URL of `keys` (the first that is set) under the endpoint policy `allowInsecureHTTP`
    /// asks for.
    /// - Parameter missing: the reason when no key is set.
    /// - Throws: `.invalidParameter` when no URL is set, or the policy refuses it.
    public func endpoint(
        _ keys: [ProviderParameters.Key],
        in parameters: ProviderParameters,
        missing: String
    ) throws -> (url: URL, policy: RemoteEndpointPolicy) {
        var url: URL?
        for key in keys where url == nil { url = try parameters.url(key) }
        guard let url else { throw CertificateProviderError.invalidParameter(missing) }
        let policy = try RemoteProviderParameters.endpointPolicy(parameters)
        try CertificateProviderError.convertingHTTPErrors { try policy.validate(url) }
        return (url, policy)
    }

    /// The transport a client of this provider uses: the app's, or a ``CurlTransport`` made now with
    /// `endpointPolicy` and the TLS parameters (the CA file read and the client identity opened now):
    /// a transport that cannot be made is an error, never a silent default.
    /// - Throws: as ``RemoteTLSParameters/transport(for:endpointPolicy:given:identityLookup:)``;
    ///   ``CurlTransport/init(configuration:)``'s errors.
    public func transport(
        for parameters: ProviderParameters,
        endpointPolicy: RemoteEndpointPolicy
    ) throws -> any HTTPTransport {
        let configured = try RemoteTLSParameters.transport(
            for: parameters,
            endpointPolicy: endpointPolicy,
            given: transport,
            identityLookup: clientIdentityLookup
        )
        return configured ?? CurlTransport(endpointPolicy: endpointPolicy)
    }

    /// The directory the `storeDirectory` parameter names, or nil when it is not set.
    /// - Throws: `.invalidParameter` when the value is not text.
    public func storeDirectory(_ parameters: ProviderParameters) throws -> URL? {
        guard let path = try parameters.string("storeDirectory"), !path.isEmpty else { return nil }
        return URL(fileURLWithPath: path, isDirectory: true)
    }
}
