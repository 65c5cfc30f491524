public import CertificateProviders
internal import HTTPClient
import RemoteProviderSupport

extension CSCProvider {
    /// `certsign csc …` works with a CSC service without `--provider`.
    public static var commandGroup: String? { "csc" }

    /// Hints for `sign --provider csc --param …` and `csc credentials --param …`: the client's
    /// credentials, the credential's PIN and one-time password, the service's CA file.
    public static func commandLineHint(
        for error: CertificateProviderError,
        in command: ProviderCommandLine
    ) -> String? {
        switch error.code {
        case .authenticationFailed:
            return "check --param clientID=ID and the client secret (--param-env clientSecret=VAR or --param-file "
                + "clientSecret=PATH) the service registered; CSC keeps no session, so there is nothing to clear"
        case .wrongPassword, .passwordRequired:
            return "give the credential's PIN with --param-env pin=VAR (or --param-file pin=PATH) and a one-time "
                + "password with --param-env otp=VAR; 'certsign csc credentials' shows what each credential asks for"
        case .untrustedServerCertificate:
            return RemoteTLSParameters.untrustedServerHint(server: "service", urlParameter: ParameterKey.url)
        default:
            return nil
        }
    }
}
