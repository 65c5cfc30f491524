internal import CertificateProviders
public import RemoteProviderSupport

extension CryptoProDSSProvider {
    /// Hints for `sign --provider cryptopro-dss --param …`: its credentials, PIN, CA file and kept
    /// session.
    public static var commandLineHints: RemoteCommandLineHints? {
        RemoteCommandLineHints(
            server: "server",
            urlParameter: ParameterKey.url,
            [
                .authenticationFailed: "check --param username=NAME and the password (--param-env password=VAR or "
                    + "--param-file password=PATH); a kept session serves only the credentials it was made with, and "
                    + "'certsign sessions clear cryptopro-dss' forgets it",
                .wrongPassword: "give the certificate's PIN with --param-env pin=VAR or --param-file pin=PATH",
                // Validation's code (the coordinator checks what a signing server returns); its raw value is
                // stable, and this module does not link Validation.
                CertificateProviderError.Code("serverSignatureMismatch"): "run 'certsign sessions clear "
                    + "cryptopro-dss' and sign again (a new login lists the certificates afresh); if it persists, "
                    + "the server signs with another certificate than it lists",
            ]
        )
    }
}
