public import CertificateProviders
import HTTPClient
public import RemoteProviderSupport

/// How the provider declares itself: its ID, its parameters (``CryptoProDSSProvider/ParameterKey``,
/// ``CryptoProDSSProvider/schema``), its summary and how the registry makes it.
extension CryptoProDSSProvider: BuiltInProvider {
    /// Always ``ProviderID/cryptoProDSS``.
    public static var id: ProviderID { .cryptoProDSS }

    /// The parameter keys this provider reads; the ones every remote provider takes (`timeout`,
    /// `trustedCAFile`, `clientIdentity`, …) come from ``HTTPClient/RemoteParameterKeys``.
    public enum ParameterKey: RemoteParameterKeys {
        /// The provider whose schema declares the keys (``ProviderParameterKeys/all`` comes from it).
        public typealias Provider = CryptoProDSSProvider

        /// The `url` parameter (declared in ``CryptoProDSSProvider/schema``).
        public static let url = ProviderParameters.Key.url
        /// The `username` parameter (declared in ``CryptoProDSSProvider/schema``).
        public static let username: ProviderParameters.Key = "username"
        /// The `password` parameter (declared in ``CryptoProDSSProvider/schema``).
        public static let password: ProviderParameters.Key = "password"
        /// The `clientID` parameter (declared in ``CryptoProDSSProvider/schema``).
        public static let clientID: ProviderParameters.Key = "clientID"
        /// The `clientSecret` parameter (declared in ``CryptoProDSSProvider/schema``).
        public static let clientSecret: ProviderParameters.Key = "clientSecret"
        /// The `certificateID` parameter (declared in ``CryptoProDSSProvider/schema``).
        public static let certificateID: ProviderParameters.Key = "certificateID"
        /// The `certificate` parameter (declared in ``CryptoProDSSProvider/schema``).
        public static let certificate: ProviderParameters.Key = "certificate"
        /// The `pin` parameter (declared in ``CryptoProDSSProvider/schema``).
        public static let pin: ProviderParameters.Key = "pin"
        /// The `storeDirectory` parameter (declared in ``CryptoProDSSProvider/schema``).
        public static let storeDirectory: ProviderParameters.Key = "storeDirectory"
        /// The `uploadMode` parameter (declared in ``CryptoProDSSProvider/schema``).
        public static let uploadMode: ProviderParameters.Key = "uploadMode"
        /// The `maxUploadBytes` parameter (declared in ``CryptoProDSSProvider/schema``).
        public static let maxUploadBytes: ProviderParameters.Key = "maxUploadBytes"
        /// The `confirmation` parameter (declared in ``CryptoProDSSProvider/schema``).
        public static let confirmation: ProviderParameters.Key = "confirmation"
        /// The `approvalTimeout` parameter (declared in ``CryptoProDSSProvider/schema``).
        public static let approvalTimeout: ProviderParameters.Key = "approvalTimeout"
    }

    /// The provider's parameters, each declared once (validation, redaction and help come from here).
    public static let schema = ProviderParameterSchema.remoteProvider(
        .cryptoProDSS,
        [
            .init(
                ParameterKey.url,
                .url,
                "the server's base URL (https://; http:// only to loopback or with allowInsecureHTTP)"
            ),
            .init(ParameterKey.username, .string, "the DSS user (to log in)"),
            .init(ParameterKey.password, .secret, "the user's password (to log in)"),
            .init(
                ParameterKey.clientID,
                .string,
                default: "cryptopro.cloud.csp",
                "the OAuth client registered on the STS"
            ),
            .init(ParameterKey.clientSecret, .secret, "the OAuth client secret (sent as HTTP Basic)"),
            .init(ParameterKey.certificateID, .integer(atLeast: 0), "the certificate to use; 0 is the user's default"),
            .init(ParameterKey.certificate, .string, "the certificate by friendly name, subject DN or CN"),
            .init(ParameterKey.pin, .secret, "the certificate PIN, sent as PinCode when signing"),
            .init(ParameterKey.storeDirectory, .path, "a directory for the session cache"),
            .init(
                ParameterKey.uploadMode,
                .oneOf(["auto", "content", "hash"]),
                default: "auto",
                "content sends the document, hash its digest, auto the document up to maxUploadBytes"
            ),
            .init(
                ParameterKey.maxUploadBytes,
                .integer(atLeast: 1),
                default: String(CryptoProDSSProvider.defaultMaxUploadBytes),
                "the largest document auto and content send whole"
            ),
            .init(
                ParameterKey.confirmation,
                .oneOf(["none", "required"]),
                default: "none",
                "required: sign through a transaction the user confirms in myDSS"
            ),
            .init(
                ParameterKey.approvalTimeout,
                .seconds,
                default: "300",
                "with confirmation=required: how long signing waits for the confirmation"
            ),
        ]
    )

    /// One line saying what the provider is (`certsign providers`).
    public static let summary = "CryptoPro DSS SignServer REST API (server-side CAdES)"
}
