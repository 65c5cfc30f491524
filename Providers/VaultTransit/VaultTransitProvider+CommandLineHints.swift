internal import CertificateProviders
public import RemoteProviderSupport

extension VaultTransitProvider {
    /// Hints for `sign --provider vault-transit`: a valid token, a key, and a certificate made for it (a
    /// missing token gets the tool's hint for a provider's secret parameter).
    public static var commandLineHints: RemoteCommandLineHints? {
        RemoteCommandLineHints(
            server: "server",
            urlParameter: ParameterKey.url,
            [
                .authenticationFailed: "give a valid token with --param-env token=VAR (or --param-file token=PATH); "
                    + "'bao token lookup' shows its policies",
                .keyCertificateMismatch: "make a request for this key with 'certsign csr --provider vault-transit …', "
                    + "have a CA certify it and give that certificate",
            ]
        )
    }
}
