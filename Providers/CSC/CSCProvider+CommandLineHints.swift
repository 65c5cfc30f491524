internal import CertificateProviders
public import RemoteProviderSupport

extension CSCProvider {
    /// `certsign csc …` works with a CSC service without `--provider`.
    public static var commandGroup: String? { "csc" }

    /// Hints for `sign --provider csc --param …` and `csc credentials --param …`: the client's
    /// credentials, the credential's PIN and one-time password, the service's CA file.
    public static var commandLineHints: RemoteCommandLineHints? {
        let secrets =
            "give the credential's PIN with --param-env pin=VAR (or --param-file pin=PATH) and a one-time "
            + "password with --param-env otp=VAR; 'certsign csc credentials' shows what each credential asks for"
        return RemoteCommandLineHints(
            server: "service",
            urlParameter: ParameterKey.url,
            [
                .authenticationFailed: "check --param clientID=ID and the client secret (--param-env clientSecret=VAR "
                    + "or --param-file clientSecret=PATH) the service registered; CSC keeps no session, so there is "
                    + "nothing to clear",
                .wrongPassword: secrets,
                .passwordRequired: secrets,
            ]
        )
    }
}
