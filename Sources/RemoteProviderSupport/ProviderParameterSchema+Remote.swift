public import CertificateProviders
internal import HTTPClient

extension ProviderParameterSchema {
    /// A remote provider's schema: its own `parameters`, then the ones every remote provider takes
    /// (``HTTPClient/RemoteProviderParameters/shared``) under their rules
    /// (``HTTPClient/RemoteProviderParameters/rules``).
    /// - Parameters:
    ///   - provider: the provider the schema declares.
    ///   - parameters: the provider's own parameters, each declared once.
    public static func remoteProvider(_ provider: ProviderID, _ parameters: [Parameter]) -> Self {
        Self(
            provider: provider,
            parameters + RemoteProviderParameters.shared,
            rules: RemoteProviderParameters.rules
        )
    }
}
