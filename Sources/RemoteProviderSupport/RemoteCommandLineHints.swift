public import CertificateProviders

/// A remote provider's command-line hints as data: one sentence per error code, and the hint for a
/// server certificate its client does not trust, which names the provider's address parameter.
/// A ``RemoteProvider`` that declares them (``RemoteProvider/commandLineHints``) answers
/// `commandLineHint(for:in:)` from them.
public struct RemoteCommandLineHints: Sendable {
    /// What the user calls the other end (`server`, `service`, `endpoint`).
    public var server: String
    /// The provider's parameter that holds its address.
    public var urlParameter: ProviderParameters.Key
    /// The hint for each error code the provider has one of its own for.
    public var byCode: [CertificateProviderError.Code: String]

    /// Creates the hints.
    /// - Parameters:
    ///   - server: what the user calls the other end (`server`, `service`, `endpoint`).
    ///   - urlParameter: the provider's parameter that holds its address.
    ///   - byCode: the hint for each error code the provider has one of its own for.
    public init(server: String, urlParameter: ProviderParameters.Key, _ byCode: [CertificateProviderError.Code: String])
    {
        self.server = server
        self.urlParameter = urlParameter
        self.byCode = byCode
    }

    /// The hint for `error`: its code's sentence; for an untrusted server certificate without one,
    /// ``RemoteTLSParameters/untrustedServerHint(server:urlParameter:)``; else nil (the tool's general
    /// hints apply).
    public func hint(for error: CertificateProviderError) -> String? {
        if let hint = byCode[error.code] { return hint }
        guard error.code == .untrustedServerCertificate else { return nil }
        return RemoteTLSParameters.untrustedServerHint(server: server, urlParameter: urlParameter)
    }
}
