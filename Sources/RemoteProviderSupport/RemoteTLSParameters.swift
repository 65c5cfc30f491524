public import CertificateProviders
public import HTTPClient

/// The TLS parameters every remote provider accepts, declared once:
///
/// | key | type | meaning |
/// |---|---|---|
/// | `trustedCAFile` | string (path) | a PEM file of CAs trusted for the server, added to the system store |
/// | `clientIdentity` | string | the alias of the identity presented as the TLS client certificate |
/// | `clientIdentityPassword` | secret | the password that opens that identity |
///
/// They configure the `CurlTransport` the provider makes for itself; with a transport of the app's
/// own they are refused (configure that transport instead).
public enum RemoteTLSParameters {
    /// `trustedCAFile`: a PEM file of CA certificates to trust for the server besides the system store.
    public static let trustedCAFile: ProviderParameters.Key = "trustedCAFile"
    /// `clientIdentity`: the alias (in the identity store the lookup reads) of the TLS client identity.
    public static let clientIdentity: ProviderParameters.Key = "clientIdentity"
    /// `clientIdentityPassword`: the secret that opens the client identity.
    public static let clientIdentityPassword: ProviderParameters.Key = "clientIdentityPassword"
    /// The three keys.
    public static let keys: Set<ProviderParameters.Key> = [trustedCAFile, clientIdentity, clientIdentityPassword]

    /// Checks the types of the three parameters.
    /// - Throws: `.invalidParameter` for a value of the wrong type, or a password without an identity.
    public static func check(_ parameters: ProviderParameters) throws {
        _ = try parameters.string(trustedCAFile)
        let alias = try parameters.string(clientIdentity)
        if try parameters.secret(clientIdentityPassword) != nil, alias == nil {
            throw CertificateProviderError.invalidParameter(
                "parameter 'clientIdentityPassword' is set but 'clientIdentity' is not"
            )
        }
    }

    /// The transport a provider uses: `given` when the app passed one, else a `CurlTransport` with
    /// the endpoint policy and these TLS parameters (the CA file read and the identity opened now).
    /// - Parameters:
    ///   - parameters: the provider's parameters.
    ///   - endpointPolicy: the provider's endpoint policy.
    ///   - given: the app's transport, or nil.
    ///   - identityLookup: how to open `clientIdentity`; nil when the provider was given none.
    /// - Returns: nil when `given` is nil and no TLS parameter is set (the client's default transport).
    /// - Throws: `.invalidParameter` when TLS parameters come with an app transport, or
    ///   `clientIdentity` without a lookup; the lookup's errors (`.notStored`, `.wrongPassword`);
    ///   `CurlTransport.init(configuration:)`'s errors for the CA file and the identity.
    public static func transport(
        for parameters: ProviderParameters,
        endpointPolicy: RemoteEndpointPolicy,
        given: (any HTTPTransport)?,
        identityLookup: ClientIdentityLookup?
    ) throws -> (any HTTPTransport)? {
        let caFile = try parameters.string(trustedCAFile)
        let alias = try parameters.string(clientIdentity)
        guard caFile != nil || alias != nil else { return given }
        guard given == nil else {
            throw CertificateProviderError.invalidParameter(
                "parameters 'trustedCAFile' and 'clientIdentity' configure the provider's own transport; this "
                    + "provider was given a transport: configure that one instead"
            )
        }
        var identity: SigningIdentity?
        if let alias {
            guard let identityLookup else {
                throw CertificateProviderError.invalidParameter(
                    "parameter 'clientIdentity' needs an identity store: create the provider with a "
                        + "clientIdentityLookup"
                )
            }
            identity = try identityLookup(alias, try parameters.secret(clientIdentityPassword))
        }
        let configuration = CurlTransport.Configuration(
            endpointPolicy: endpointPolicy,
            trustedCAFile: caFile,
            trustedCAFileReplacesSystemStore: try parameters.boolean(RemoteProviderParameters.trustedCAFileOnly.key)
                ?? false,
            clientIdentity: try identity.map(TLSClientIdentity.init)
        )
        return try CertificateProviderError.convertingHTTPErrors { try CurlTransport(configuration: configuration) }
    }
}

extension RemoteTLSParameters {
    /// The command-line hint for a server certificate a remote provider's client does not trust:
    /// name the CA with this parameter, or check the address (`BuiltInProvider.commandLineHint`).
    /// - Parameters:
    ///   - server: what the user calls the other end (`server`, `service`, `endpoint`).
    ///   - urlParameter: the provider's parameter that holds its address.
    public static func untrustedServerHint(server: String, urlParameter: ProviderParameters.Key) -> String {
        "trust the \(server)'s CA with --param \(trustedCAFile)=PATH (PEM), or check --param \(urlParameter)=URL"
    }
}
