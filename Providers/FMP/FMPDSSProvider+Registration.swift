public import CertificateProviders
import HTTPClient
public import RemoteProviderSupport

/// How the provider declares itself: its ID, its parameters (``FMPDSSProvider/ParameterKey``,
/// ``FMPDSSProvider/schema``), its summary and how the registry makes it.
extension FMPDSSProvider: BuiltInProvider {
    /// Always ``ProviderID/fmpDSS``.
    public static var id: ProviderID { .fmpDSS }

    /// The parameter keys this provider reads; the ones every remote provider takes (`timeout`,
    /// `trustedCAFile`, `clientIdentity`, …) come from ``HTTPClient/RemoteParameterKeys``.
    public enum ParameterKey: RemoteParameterKeys {
        /// The provider whose schema declares the keys (``ProviderParameterKeys/all`` comes from it).
        public typealias Provider = FMPDSSProvider

        /// The `host` parameter (declared in ``FMPDSSProvider/schema``).
        public static let host: ProviderParameters.Key = "host"
        /// The `url` parameter: the same as `host` (SAP's well-known key).
        public static let url = ProviderParameters.Key.url
        /// The `apiVersion` parameter (declared in ``FMPDSSProvider/schema``).
        public static let apiVersion: ProviderParameters.Key = "apiVersion"
        /// The `environment` parameter (declared in ``FMPDSSProvider/schema``).
        public static let environment: ProviderParameters.Key = "environment"
        /// The `project` parameter (declared in ``FMPDSSProvider/schema``).
        public static let project: ProviderParameters.Key = "project"
        /// The `device` parameter (declared in ``FMPDSSProvider/schema``).
        public static let device: ProviderParameters.Key = "device"
        /// The `username` parameter (declared in ``FMPDSSProvider/schema``).
        public static let username: ProviderParameters.Key = "username"
        /// The `password` parameter (declared in ``FMPDSSProvider/schema``).
        public static let password: ProviderParameters.Key = "password"
        /// The `dssPassword` parameter (declared in ``FMPDSSProvider/schema``).
        public static let dssPassword: ProviderParameters.Key = "dssPassword"
        /// The `certificateID` parameter (declared in ``FMPDSSProvider/schema``).
        public static let certificateID: ProviderParameters.Key = "certificateID"
        /// The `pin` parameter (declared in ``FMPDSSProvider/schema``).
        public static let pin: ProviderParameters.Key = "pin"
        /// The `storeDirectory` parameter (declared in ``FMPDSSProvider/schema``).
        public static let storeDirectory: ProviderParameters.Key = "storeDirectory"
    }

    /// The provider's parameters, each declared once (validation, redaction and help come from here).
    public static let schema = ProviderParameterSchema.remoteProvider(
        .fmpDSS,
        [
            .init(
                ParameterKey.host,
                .url,
                "the platform URL (https://; http:// only to loopback or with allowInsecureHTTP)"
            ),
            .init(ParameterKey.url, .url, "the same as host"),
            .init(ParameterKey.apiVersion, .string, default: "v1", "the API version"),
            .init(ParameterKey.environment, .string, "the environment (to log in)"),
            .init(ParameterKey.project, .string, "the project (to log in)"),
            .init(ParameterKey.device, .string, default: "the host name", "the device id"),
            .init(ParameterKey.username, .string, "the platform user (to log in)"),
            .init(ParameterKey.password, .secret, "the platform password (to log in)"),
            .init(ParameterKey.dssPassword, .secret, "the DSS password (to list certificates and sign)"),
            .init(ParameterKey.certificateID, .integer, "the DSS certificate to use when the user has several"),
            .init(ParameterKey.pin, .secret, "the certificate PIN, sent when signing"),
            .init(ParameterKey.storeDirectory, .path, "where the session is kept (fmp-session.json)"),
        ]
    )

    /// One line saying what the provider is (`certsign providers`).
    public static let summary = "Foresight Mobile Platform DSS (HHFWDss API); see 'certsign dss'"
}
