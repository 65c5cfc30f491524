public import CertificateProviders
internal import HTTPClient
public import RemoteProviderSupport

/// How the provider declares itself: its ID, its parameters (``AWSKMSProvider/ParameterKey``,
/// ``AWSKMSProvider/schema``), its summary and how the registry makes it.
extension AWSKMSProvider: BuiltInProvider {
    /// Always ``ProviderID/awsKMS``.
    public static var id: ProviderID { .awsKMS }

    /// The parameter keys this provider reads; the ones every remote provider takes (`timeout`,
    /// `trustedCAFile`, `clientIdentity`, …) come from ``HTTPClient/RemoteParameterKeys``.
    public enum ParameterKey: RemoteParameterKeys {
        /// The provider whose schema declares the keys (``ProviderParameterKeys/all`` comes from it).
        public typealias Provider = AWSKMSProvider

        /// The `region` parameter (declared in ``AWSKMSProvider/schema``).
        public static let region: ProviderParameters.Key = "region"
        /// The `keyID` parameter (declared in ``AWSKMSProvider/schema``).
        public static let keyID: ProviderParameters.Key = "keyID"
        /// The `endpointURL` parameter (declared in ``AWSKMSProvider/schema``).
        public static let endpointURL: ProviderParameters.Key = "endpointURL"
        /// The `accessKeyID` parameter (declared in ``AWSKMSProvider/schema``).
        public static let accessKeyID: ProviderParameters.Key = "accessKeyID"
        /// The `secretAccessKey` parameter (declared in ``AWSKMSProvider/schema``).
        public static let secretAccessKey: ProviderParameters.Key = "secretAccessKey"
        /// The `sessionToken` parameter (declared in ``AWSKMSProvider/schema``).
        public static let sessionToken: ProviderParameters.Key = "sessionToken"
        /// The `certificate` parameter (declared in ``AWSKMSProvider/schema``).
        public static let certificate: ProviderParameters.Key = "certificate"
        /// The `messageType` parameter (declared in ``AWSKMSProvider/schema``).
        public static let messageType: ProviderParameters.Key = "messageType"
        /// The `scheme` parameter: how an RSA key signs, `rsa-pkcs1v15` (default) or `rsa-pss` (as for
        /// vault-transit and pkcs11).
        public static let scheme: ProviderParameters.Key = "scheme"
        /// The `concurrentRequests` parameter (declared in ``AWSKMSProvider/schema``).
        public static let concurrentRequests: ProviderParameters.Key = "concurrentRequests"
    }

    /// The provider's parameters, each declared once (validation, redaction and help come from here).
    public static let schema = ProviderParameterSchema.remoteProvider(
        .awsKMS,
        [
            .init(ParameterKey.region, .string, default: "$AWS_REGION or $AWS_DEFAULT_REGION", "the AWS region"),
            .init(ParameterKey.keyID, .string, "the KMS key: key ID, key ARN, alias/NAME or alias ARN"),
            .init(
                ParameterKey.endpointURL,
                .url,
                default: "https://kms.<region>.amazonaws.com",
                "the KMS endpoint (a VPC endpoint, LocalStack, moto)"
            ),
            .init(ParameterKey.accessKeyID, .string, default: "$AWS_ACCESS_KEY_ID", "the AWS access key ID"),
            .init(
                ParameterKey.secretAccessKey,
                .secret,
                "the AWS secret access key (when not given: $AWS_SECRET_ACCESS_KEY, then the profile's file)"
            ),
            .init(
                ParameterKey.sessionToken,
                .secret,
                "the session token of temporary credentials (when not given: $AWS_SESSION_TOKEN)"
            ),
            .init(
                ParameterKey.certificate,
                .path,
                "PEM file: the certificate issued for the key, then its chain (needed to sign documents)"
            ),
            .init(
                ParameterKey.messageType,
                .oneOf(AWSKMSMessageType.allCases.map(\.rawValue)),
                default: "auto",
                "auto: RAW when the signed attributes fit 4096 bytes, else DIGEST"
            ),
            .init(
                ParameterKey.scheme,
                .oneOf(["rsa-pkcs1v15", "rsa-pss"]),
                default: "rsa-pkcs1v15",
                "the scheme an RSA key signs with (EC keys sign ECDSA)"
            ),
            .init(
                ParameterKey.concurrentRequests,
                .integer(atLeast: 1),
                default: "8",
                "Sign requests in flight at once when signing many documents"
            ),
        ]
    )

    /// One line saying what the provider is (`certsign providers`).
    public static let summary = "AWS KMS asymmetric key (Sign with SigV4; CAdES built here)"

    /// Makes a provider with `parameters` (validated), the context's environment (the `AWS_*`
    /// fallbacks) and `clientIdentityLookup`; it talks to KMS through a ``CurlTransport`` made
    /// from the TLS parameters.
    /// - Throws: `.invalidParameter`, as ``init(parameters:transport:environment:clientIdentityLookup:)``.
    public static func make(parameters: ProviderParameters, context: ProviderContext) throws -> AWSKMSProvider {
        try AWSKMSProvider(
            parameters: parameters,
            environment: context.environment,
            clientIdentityLookup: context.clientIdentityLookup
        )
    }
}
