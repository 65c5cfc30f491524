internal import CertificateProviders
public import RemoteProviderSupport

extension AWSKMSProvider {
    /// Hints for `sign --provider aws-kms --param …`: credentials (also from the AWS variables), the
    /// region, a signing key, the endpoint's CA file.
    public static var commandLineHints: RemoteCommandLineHints? {
        RemoteCommandLineHints(
            server: "endpoint",
            urlParameter: ParameterKey.endpointURL,
            [
                .passwordRequired: "give the secret access key with --param-env secretAccessKey=VAR (or "
                    + "AWS_SECRET_ACCESS_KEY), never on the command line",
                .authenticationFailed: "check --param accessKeyID=ID (or AWS_ACCESS_KEY_ID), the secret access key "
                    + "(--param-env secretAccessKey=VAR, or AWS_SECRET_ACCESS_KEY), the session token of temporary "
                    + "credentials (--param-env sessionToken=VAR, or AWS_SESSION_TOKEN) and --param region=REGION",
                .unsupportedOperation: "give --param keyID=… of an asymmetric key with KeyUsage SIGN_VERIFY ('aws kms "
                    + "describe-key' shows it)",
            ]
        )
    }
}
