public import CertificateProviders
import Foundation
import HTTPClient
// The provider's public API stands on RemoteProviderSupport (its `remote` state, its initializers,
// the shared parameter keys), so importing the provider alone reaches all of it.
@_exported public import RemoteProviderSupport

/// A key in the HashiCorp Vault or OpenBao transit secrets engine as a `CertificateProvider` (ID
/// ``ProviderID/vaultTransit``, `vault-transit`): the key never leaves the server, which signs
/// digests; the CMS / CAdES / PAdES container is built locally around the returned values (the
/// coordinator's external-key path), so the identity's key is a ``VaultTransitSigningKey``.
///
/// Parameters: ``schema`` declares them; `certsign providers --params vault-transit` prints them.
/// The initializers, ``setParameters(_:)`` and ``initialize(options:)`` validate through it, with the
/// same messages.
///
/// ``initialize(options:)`` reads the `certificate` file, reads the key (`GET <mount>/keys/<key>`),
/// refuses a key that cannot sign, picks the version (`keyVersion`, default the latest) and checks
/// that the certificate certifies that version's public key before anything is signed
/// (`.keyCertificateMismatch` naming both fingerprints). A key has no certificate until a CA issues
/// one: ``certificateRequestKey(options:)`` (what `certsign csr` uses) hands out the key alone.
/// The identity is kept in memory only: ``storedCertificate()`` returns it in the same process.
public final class VaultTransitProvider: CertificateProvider, CertificateRequestSigning {
    /// The parameters and the identity of the last ``initialize(options:)`` (in memory only), and the
    /// base every remote provider holds: its `parameters`, `setParameters(_:)` and stored identity
    /// answer from it (`RemoteProvider`).
    public let remote: RemoteProviderState<Void>

    /// Makes the provider around `remote` (the initializers call it).
    public init(remote: RemoteProviderState<Void>) { self.remote = remote }

    /// Reads the certificate and the key, checks that they match and returns the identity (see the
    /// type's documentation).
    /// - Throws: `.invalidParameter` for missing or wrong parameters, an unreadable certificate file,
    ///   an unknown key, mount or version; `.keyCertificateMismatch` when the certificate does not
    ///   certify the key; `.unsupportedOperation` for a key that cannot sign (an encryption key);
    ///   `.authenticationFailed` for a refused token; `.network`, `.timeout`, the TLS codes.
    public func initialize(options: ProviderParameters) async throws -> SigningIdentity {
        try await certifiedIdentity(
            options: options,
            missing: "parameter 'certificate' (the key's certificate, PEM) is required to sign; a key without one: "
                + "'certsign csr --provider vault-transit …' makes the request a CA certifies"
        ) { try await self.transitKey($0, certificate: $1) }
    }

    /// The key alone, for a certificate request: the same checks as ``initialize(options:)`` but the
    /// certificate, which is neither needed nor read.
    /// - Throws: as ``initialize(options:)``, less the certificate's errors.
    public func certificateRequestKey(options: ProviderParameters) async throws -> any SigningKey {
        try await transitKey(try remote.merged(options), certificate: nil)
    }

    /// Reads the key and its version and, with a certificate, checks that it certifies that version.
    private func transitKey(
        _ parameters: ProviderParameters,
        certificate: Certificate?
    ) async throws
        -> VaultTransitSigningKey
    {
        let name = try parameters.string(ParameterKey.key) ?? ""
        guard !name.isEmpty else { throw CertificateProviderError.invalidParameter("parameter 'key' is required") }
        let client = try makeClient(parameters)
        let info = try await client.key(name)
        guard info.supportsSigning else {
            throw CertificateProviderError.unsupportedOperation(
                "Vault transit key '\(name)' is of type \(info.type), which cannot sign; use a signing key (bao write "
                    + "-f \(client.configuration.mount)/keys/NAME type=ecdsa-p256)"
            )
        }
        let version = try parameters.integer(ParameterKey.keyVersion) ?? info.latestVersion
        let what = "Vault transit key '\(name)' version \(version)"
        guard let pem = info.publicKeys[version] else {
            throw CertificateProviderError.invalidParameter(
                "parameter 'keyVersion': \(what) does not exist or has no public key (versions: "
                    + "\(info.publicKeys.keys.sorted().map(String.init).joined(separator: ", ")))"
            )
        }
        let publicKey = try ExternalPublicKey(pemEncoded: pem, what: what)
        guard publicKey.algorithm.isRSA || publicKey.algorithm.isEC else {
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "\(what) is a \(info.type) key; vault-transit signs with RSA and ECDSA keys"
            )
        }
        if let certificate {
            try ExternalKeyMatch.requireMatch(
                certificate: certificate,
                keySubjectPublicKeyInfo: publicKey.derRepresentation,
                keyName: what
            )
        }
        return VaultTransitSigningKey(
            name: name,
            version: version,
            publicKey: publicKey.derRepresentation,
            algorithm: publicKey.algorithm,
            keySize: publicKey.keySize,
            certificate: certificate,
            rsaScheme: SignatureScheme(
                try parameters.string(ParameterKey.scheme) ?? SignatureScheme.rsaPKCS1v15.rawValue
            ),
            client: client
        )
    }

    private func makeClient(_ parameters: ProviderParameters) throws -> VaultTransitClient {
        let (url, policy) = try base.endpoint(
            [ParameterKey.url],
            in: parameters,
            missing: "parameter 'url' is required"
        )
        let configuration = VaultTransitClient.Configuration(
            baseURL: url,
            mount: try parameters.string(ParameterKey.mount).flatMap { $0.isEmpty ? nil : $0 } ?? "transit",
            token: try parameters.requiredSecret(ParameterKey.token),
            namespace: try parameters.string(ParameterKey.namespace),
            timeout: try RemoteProviderParameters.timeout(parameters),
            endpointPolicy: policy
        )
        return VaultTransitClient(
            configuration: configuration,
            transport: try base.transport(for: parameters, endpointPolicy: policy)
        )
    }
}

extension VaultTransitProvider: RemoteProvider {}
