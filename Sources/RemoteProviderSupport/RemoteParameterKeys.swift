public import CertificateProviders

/// The keys every remote provider takes (``RemoteProviderParameters/shared``), declared once: a remote
/// provider's `ParameterKey` namespace conforms and so has them beside its own keys
/// (`FMPDSSProvider.ParameterKey.timeout`, `CSCProvider.ParameterKey.trustedCAFile`), and ``ProviderParameterKeys``'s
/// `all` and `secrets` from the provider's schema.
public protocol RemoteParameterKeys: ProviderParameterKeys {}

extension RemoteParameterKeys {
    /// The `allowInsecureHTTP` parameter (``RemoteProviderParameters/allowInsecureHTTP``).
    public static var allowInsecureHTTP: ProviderParameters.Key { RemoteProviderParameters.allowInsecureHTTP.key }
    /// The `timeout` parameter (``RemoteProviderParameters/timeout``).
    public static var timeout: ProviderParameters.Key { RemoteProviderParameters.timeout.key }
    /// The `trustedCAFile` parameter (``RemoteTLSParameters/trustedCAFile``).
    public static var trustedCAFile: ProviderParameters.Key { RemoteTLSParameters.trustedCAFile }
    /// The `trustedCAFileOnly` parameter (``RemoteProviderParameters/trustedCAFileOnly``).
    public static var trustedCAFileOnly: ProviderParameters.Key { RemoteProviderParameters.trustedCAFileOnly.key }
    /// The `clientIdentity` parameter (``RemoteTLSParameters/clientIdentity``).
    public static var clientIdentity: ProviderParameters.Key { RemoteTLSParameters.clientIdentity }
    /// The `clientIdentityPassword` parameter (``RemoteTLSParameters/clientIdentityPassword``).
    public static var clientIdentityPassword: ProviderParameters.Key { RemoteTLSParameters.clientIdentityPassword }
}
