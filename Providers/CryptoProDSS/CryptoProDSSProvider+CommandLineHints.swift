public import CertificateProviders
internal import HTTPClient
import RemoteProviderSupport

extension CryptoProDSSProvider {
    /// Hints for `sign --provider cryptopro-dss --param …`: its credentials, PIN, CA file and kept
    /// session.
    public static func commandLineHint(
        for error: CertificateProviderError,
        in command: ProviderCommandLine
    ) -> String? {
        switch error.code {
        case .authenticationFailed:
            return "check --param username=NAME and the password (--param-env password=VAR or --param-file "
                + "password=PATH); a kept session serves only the credentials it was made with, and 'certsign "
                + "sessions clear cryptopro-dss' forgets it"
        case .wrongPassword:
            return "give the certificate's PIN with --param-env pin=VAR or --param-file pin=PATH"
        case .untrustedServerCertificate:
            return RemoteTLSParameters.untrustedServerHint(server: "server", urlParameter: ParameterKey.url)
        // Validation's code (the coordinator checks what a signing server returns); its raw value is
        // stable, and this module does not link Validation.
        case CertificateProviderError.Code("serverSignatureMismatch"):
            return "run 'certsign sessions clear cryptopro-dss' and sign again (a new login lists the certificates "
                + "afresh); if it persists, the server signs with another certificate than it lists"
        default:
            return nil
        }
    }
}
