public import CertificateProviders
import HTTPClient
public import RemoteProviderSupport

/// How the provider declares itself: its ID, its parameters (``VaultTransitProvider/ParameterKey``,
/// ``VaultTransitProvider/schema``), its summary and how the registry makes it.
extension VaultTransitProvider: BuiltInProvider {
    /// Always ``ProviderID/vaultTransit``.
    public static var id: ProviderID { .vaultTransit }

    /// The parameter keys this provider reads; the ones every remote provider takes (`timeout`,
    /// `trustedCAFile`, `clientIdentity`, …) come from ``HTTPClient/RemoteParameterKeys``.
    public enum ParameterKey: RemoteParameterKeys {
        /// The provider whose schema declares the keys (``ProviderParameterKeys/all`` comes from it).
        public typealias Provider = VaultTransitProvider

        /// The `url` parameter: the server's address (`https://vault.example:8200`).
        public static let url = ProviderParameters.Key.url
        /// The `key` parameter: the transit key's name.
        public static let key: ProviderParameters.Key = "key"
        /// The `token` parameter (a secret): the Vault token, sent as `X-Vault-Token`.
        public static let token: ProviderParameters.Key = "token"
        /// The `mount` parameter: where the transit engine is mounted (default `transit`).
        public static let mount: ProviderParameters.Key = "mount"
        /// The `namespace` parameter: the Vault Enterprise / OpenBao namespace (`X-Vault-Namespace`).
        public static let namespace: ProviderParameters.Key = "namespace"
        /// The `keyVersion` parameter: the key version that signs (default the latest).
        public static let keyVersion: ProviderParameters.Key = "keyVersion"
        /// The `certificate` parameter: the PEM file of the key's certificate, optionally followed by
        /// its chain.
        public static let certificate: ProviderParameters.Key = "certificate"
        /// The `scheme` parameter: how an RSA key signs, `rsa-pkcs1v15` (default) or `rsa-pss`.
        public static let scheme: ProviderParameters.Key = "scheme"
    }

    /// The provider's parameters, each declared once (validation, redaction and help come from here).
    public static let schema = ProviderParameterSchema.remoteProvider(
        .vaultTransit,
        [
            .init(ParameterKey.url, .url, "the server's address, e.g. https://vault.example:8200"),
            .init(ParameterKey.key, .string, "the transit key's name"),
            .init(ParameterKey.token, .secret, "the Vault token (needs read on keys/KEY, update on sign/KEY)"),
            .init(ParameterKey.mount, .string, default: "transit", "the transit engine's mount path"),
            .init(ParameterKey.namespace, .string, "the namespace (X-Vault-Namespace), when the server has them"),
            .init(ParameterKey.keyVersion, .integer(atLeast: 1), default: "the latest", "the key version that signs"),
            .init(
                ParameterKey.certificate,
                .path,
                "PEM file: the key's certificate, then its chain (certsign csr asks a CA for one)"
            ),
            .init(
                ParameterKey.scheme,
                .oneOf([SignatureScheme.rsaPKCS1v15, .rsaPSS].map(\.description)),
                default: SignatureScheme.rsaPKCS1v15.description,
                "the scheme an RSA key signs with (EC keys sign ECDSA)"
            ),
        ]
    )

    /// One line saying what the provider is (`certsign providers`).
    public static let summary =
        "HashiCorp Vault / OpenBao transit key (the server signs digests, CAdES built here); 'certsign csr' for its certificate"
}
