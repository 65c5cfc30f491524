public import CertificateProviders
import HTTPClient
public import RemoteProviderSupport

/// How the provider declares itself: its ID, its parameters (``CSCProvider/ParameterKey``,
/// ``CSCProvider/schema``), its summary and how the registry makes it.
extension CSCProvider: BuiltInProvider {
    /// Always ``ProviderID/csc``.
    public static var id: ProviderID { .csc }

    /// The parameter keys this provider reads; the ones every remote provider takes (`timeout`,
    /// `trustedCAFile`, `clientIdentity`, …) come from ``HTTPClient/RemoteParameterKeys``.
    public enum ParameterKey: RemoteParameterKeys {
        /// The provider whose schema declares the keys (``ProviderParameterKeys/all`` comes from it).
        public typealias Provider = CSCProvider

        /// The `url` parameter (declared in ``CSCProvider/schema``).
        public static let url = ProviderParameters.Key.url
        /// The `clientID` parameter (declared in ``CSCProvider/schema``).
        public static let clientID: ProviderParameters.Key = "clientID"
        /// The `clientSecret` parameter (declared in ``CSCProvider/schema``).
        public static let clientSecret: ProviderParameters.Key = "clientSecret"
        /// The `credentialID` parameter (declared in ``CSCProvider/schema``).
        public static let credentialID: ProviderParameters.Key = "credentialID"
        /// The `pin` parameter (declared in ``CSCProvider/schema``).
        public static let pin: ProviderParameters.Key = "pin"
        /// The `otp` parameter (declared in ``CSCProvider/schema``).
        public static let otp: ProviderParameters.Key = "otp"
        /// The `operationMode` parameter (declared in ``CSCProvider/schema``).
        public static let operationMode: ProviderParameters.Key = "operationMode"
        /// The `validityPeriod` parameter (declared in ``CSCProvider/schema``).
        public static let validityPeriod: ProviderParameters.Key = "validityPeriod"
        /// The `approvalTimeout` parameter (declared in ``CSCProvider/schema``).
        public static let approvalTimeout: ProviderParameters.Key = "approvalTimeout"
    }

    /// The provider's parameters, each declared once (validation, redaction and help come from here).
    public static let schema = ProviderParameterSchema.remoteProvider(
        .csc,
        [
            .init(ParameterKey.url, .url, "the service's base URL (methods at <url>/csc/v2/...)"),
            .init(ParameterKey.clientID, .string, "the OAuth 2.0 client (client-credentials grant)"),
            .init(ParameterKey.clientSecret, .secret, "the client secret, for confidential clients"),
            .init(
                ParameterKey.credentialID,
                .string,
                default: "the only credential",
                "the credential to sign with"
            ),
            .init(ParameterKey.pin, .secret, "the credential's PIN, when it asks for one"),
            .init(ParameterKey.otp, .secret, "a one-time password, when the credential asks for one"),
            .init(
                ParameterKey.operationMode,
                .oneOf(["synchronous", "asynchronous"]),
                default: "synchronous",
                "asynchronous: signHash with operationMode A, the signatures wait for the user's approval"
            ),
            .init(
                ParameterKey.validityPeriod,
                .seconds,
                default: "600",
                "asynchronous: how long the service keeps an operation for the user to approve"
            ),
            .init(
                ParameterKey.approvalTimeout,
                .seconds,
                default: "300",
                "how long signing waits for the user's approval (an asynchronous operation, or an authorization the service completes with the user) before it fails (timeout)"
            ),
        ]
    )

    /// One line saying what the provider is (`certsign providers`).
    public static let summary =
        "Cloud Signature Consortium API v2 (remote signHash, CAdES built here); see 'certsign csc'"
}
