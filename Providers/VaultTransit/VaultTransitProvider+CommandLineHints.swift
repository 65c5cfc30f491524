public import CertificateProviders
internal import HTTPClient
import RemoteProviderSupport

extension VaultTransitProvider {
    /// Hints for `sign --provider vault-transit`: a valid token, a key, and a certificate made for it (a
    /// missing token gets the tool's hint for a provider's secret parameter).
    public static func commandLineHint(
        for error: CertificateProviderError,
        in command: ProviderCommandLine
    ) -> String? {
        switch error.code {
        case .authenticationFailed:
            return "give a valid token with --param-env token=VAR (or --param-file token=PATH); 'bao token lookup' "
                + "shows its policies"
        case .keyCertificateMismatch:
            return "make a request for this key with 'certsign csr --provider vault-transit …', have a CA certify it "
                + "and give that certificate"
        case .untrustedServerCertificate:
            return RemoteTLSParameters.untrustedServerHint(server: "server", urlParameter: ParameterKey.url)
        default:
            return nil
        }
    }
}
