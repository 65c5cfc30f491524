public import CertificateProviders
public import Foundation
public import HTTPClient

/// The parameters every remote provider takes, declared once for all of them: the endpoint policy,
/// the per-exchange timeout and the TLS parameters of ``RemoteTLSParameters``.
///
/// A remote provider lists ``shared`` in its ``CertificateProviders/ProviderParameterSchema`` and
/// adds ``rules``; it reads the validated values with ``timeout(_:)`` and ``endpointPolicy(_:)``.
public enum RemoteProviderParameters {
    /// `allowInsecureHTTP`: allow `http://` to hosts other than loopback (default false).
    public static let allowInsecureHTTP = ProviderParameterSchema.Parameter(
        "allowInsecureHTTP",
        .boolean,
        default: "false",
        "allow clear-text http:// to hosts other than loopback"
    )
    /// `timeout`: seconds per HTTP exchange (default 30).
    public static let timeout = ProviderParameterSchema.Parameter(
        "timeout",
        .seconds,
        default: String(Int(defaultTimeout)),
        "seconds per HTTP exchange"
    )
    /// `trustedCAFile`: a PEM file of CAs trusted for the server besides the system store.
    public static let trustedCAFile = ProviderParameterSchema.Parameter(
        RemoteTLSParameters.trustedCAFile,
        .path,
        "a PEM file of CAs trusted for the server besides the system store"
    )
    /// `trustedCAFileOnly`: trust only the CAs of `trustedCAFile`, not the system store (default
    /// false), to pin a private CA.
    public static let trustedCAFileOnly = ProviderParameterSchema.Parameter(
        "trustedCAFileOnly",
        .boolean,
        default: "false",
        "trust only trustedCAFile's CAs, not the system store (pins a private CA)"
    )
    /// `clientIdentity`: the alias of the TLS client identity (opened with the provider's lookup).
    public static let clientIdentity = ProviderParameterSchema.Parameter(
        RemoteTLSParameters.clientIdentity,
        .string,
        "the alias of the identity presented as the TLS client certificate"
    )
    /// `clientIdentityPassword`: the secret that opens the client identity.
    public static let clientIdentityPassword = ProviderParameterSchema.Parameter(
        RemoteTLSParameters.clientIdentityPassword,
        .secret,
        "the password that opens clientIdentity"
    )

    /// The shared parameters, in the order help text lists them.
    public static let shared: [ProviderParameterSchema.Parameter] = [
        allowInsecureHTTP, timeout, trustedCAFile, trustedCAFileOnly, clientIdentity, clientIdentityPassword,
    ]

    /// The checks over several shared parameters (a `clientIdentityPassword` needs a `clientIdentity`).
    public static let rules: [ProviderParameterSchema.Rule] = [{ try RemoteTLSParameters.check($0) }]

    /// The default `timeout`: 30 seconds.
    public static let defaultTimeout: TimeInterval = 30

    /// The validated `timeout`, or the default.
    /// - Throws: `.invalidParameter` when the value is not an integer.
    public static func timeout(_ parameters: ProviderParameters) throws -> TimeInterval {
        TimeInterval(try parameters.integer(timeout.key) ?? Int(defaultTimeout))
    }

    /// The endpoint policy `allowInsecureHTTP` asks for.
    /// - Throws: `.invalidParameter` when the value is not a boolean.
    public static func endpointPolicy(_ parameters: ProviderParameters) throws -> RemoteEndpointPolicy {
        RemoteEndpointPolicy(allowsInsecureHTTP: try parameters.boolean(allowInsecureHTTP.key) ?? false)
    }
}
