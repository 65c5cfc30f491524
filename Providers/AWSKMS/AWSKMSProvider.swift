public import CertificateProviders
public import Foundation
public import HTTPClient
// The provider's public API stands on RemoteProviderSupport (its `remote` state, its initializers,
// the shared parameter keys), so importing the provider alone reaches all of it.
@_exported public import RemoteProviderSupport

/// An AWS KMS asymmetric signing key as a `CertificateProvider` (ID ``ProviderID/awsKMS``,
/// `aws-kms`): the key stays in KMS, which signs with `Sign`; the CMS / CAdES / PAdES container is
/// built locally around the returned values (the coordinator's external-key path), so its
/// identity's key is an ``AWSKMSSigningKey``.
///
/// Parameters: ``schema`` declares them; `certsign providers --params aws-kms` prints them. The
/// credentials, region and endpoint fall back on the standard environment variables
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` then
/// `AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL_KMS` then `AWS_ENDPOINT_URL`) of the ``ProviderContext`` it
/// is made with, then on the shared credentials and config files of `AWS_PROFILE` (else `default`),
/// as AWS tools do. Requests are signed with Signature Version 4
/// (``SigV4Signer``).
///
/// ``initialize(options:)`` reads the key with `GetPublicKey`, refuses a key whose `KeyUsage` is
/// not `SIGN_VERIFY`, reads the `certificate` file (the certificate issued for the key, then its
/// chain) and checks that the certificate carries the key's public key before anything is signed.
/// A key without a certificate yet (to make a certificate request) is reached with ``signingKey()``.
/// The identity is kept in memory only.
public final class AWSKMSProvider: CertificateProvider {
    /// The parameters, the identity of the last ``initialize(options:)`` (in memory only) and the
    /// environment the `AWS_*` fallbacks are read in, with the base every remote provider holds: its
    /// `parameters`, `setParameters(_:)` and stored identity answer from it (`RemoteProvider`).
    public let remote: RemoteProviderState<[String: String]>

    /// Makes the provider around `remote` (the initializers call it).
    public init(remote: RemoteProviderState<[String: String]>) { self.remote = remote }

    /// Creates a provider.
    /// - Parameters:
    ///   - parameters: initial parameters, checked against ``schema`` here as by ``setParameters(_:)``.
    ///   - transport: the networking; nil uses a ``CurlTransport`` (with `trustedCAFile` and
    ///     `clientIdentity` when set).
    ///   - environment: where `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
    ///     `AWS_REGION` and `AWS_DEFAULT_REGION` are read when the parameters do not say (default:
    ///     this process's environment).
    ///   - clientIdentityLookup: opens the `clientIdentity` parameter's alias (default nil: that
    ///     parameter is refused).
    /// - Throws: `.invalidParameter` naming an unknown key or a value of the wrong type.
    public convenience init(
        parameters: ProviderParameters = ProviderParameters(),
        transport: (any HTTPTransport)? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        clientIdentityLookup: ClientIdentityLookup? = nil
    ) throws {
        let base = RemoteProviderBase(
            schema: Self.schema,
            transport: transport,
            clientIdentityLookup: clientIdentityLookup
        )
        self.init(remote: try Self.makeState(base: base, parameters: parameters, kept: environment))
    }

    /// Reads the key and the certificate, checks that they belong together and returns the identity.
    /// - Throws: `.invalidParameter` for missing parameters (`keyID`, the region, the credentials,
    ///   `certificate`), an unreadable certificate file or an unknown key; `.unsupportedOperation`
    ///   for a key whose `KeyUsage` is not `SIGN_VERIFY`; `.keyCertificateMismatch` (both SHA-256
    ///   fingerprints) when the certificate is not the key's; `.authenticationFailed`,
    ///   `.serverRejected`, `.network`, `.timeout`, the TLS codes.
    public func initialize(options: ProviderParameters) async throws -> SigningIdentity {
        try await certifiedIdentity(
            options: options,
            missing: "parameter 'certificate' is required to sign: the PEM file of the certificate issued for the "
                + "KMS key (make its request with 'certsign csr --provider aws-kms')"
        ) { try await self.signingKey($0, certificate: $1) }
    }

    /// The KMS key alone, without a certificate: its public key (``AWSKMSSigningKey/publicKeyDERRepresentation``,
    /// the SubjectPublicKeyInfo `GetPublicKey` returned) and `Sign` for digests and messages, each
    /// signature checked against that public key. This is what a certificate request for the key is
    /// made with; `certificate` is not read.
    /// - Parameter options: parameters merged over ``parameters`` (default none).
    /// - Throws: as ``initialize(options:)``, except for the certificate's errors.
    public func signingKey(options: ProviderParameters = ProviderParameters()) async throws -> AWSKMSSigningKey {
        try await signingKey(try remote.merged(options), certificate: nil)
    }

    // MARK: Steps

    /// `GetPublicKey`, the usage check and, with a certificate, the key match.
    private func signingKey(
        _ parameters: ProviderParameters,
        certificate: Certificate?
    ) async throws
        -> AWSKMSSigningKey
    {
        guard let keyID = try parameters.string(ParameterKey.keyID), !keyID.isEmpty else {
            throw CertificateProviderError.invalidParameter(
                "parameter 'keyID' is required: the KMS key's ID, ARN or alias/NAME"
            )
        }
        let client = try makeClient(parameters)
        let description = try await client.publicKey(keyID: keyID)
        if let certificate {
            try ExternalKeyMatch.requireMatch(
                certificate: certificate,
                keySubjectPublicKeyInfo: description.publicKeyDERRepresentation,
                keyName: "AWS KMS key \(description.keyID)"
            )
        }
        let scheme: SignatureScheme =
            description.publicKeyAlgorithm.isRSA
            ? (try parameters.string(ParameterKey.scheme) == "rsa-pss" ? .rsaPSS : .rsaPKCS1v15) : .ecdsa
        return AWSKMSSigningKey(
            key: description,
            certificate: certificate,
            client: client,
            messageType: AWSKMSMessageType(rawValue: try parameters.string(ParameterKey.messageType) ?? "auto")
                ?? .auto,
            scheme: scheme,
            concurrentRequests: try parameters.integer(ParameterKey.concurrentRequests) ?? 8
        )
    }

    /// The client for `parameters`, the `AWS_*` environment filling what they leave out and the shared
    /// files of `AWS_PROFILE` what both leave out, as AWS tools do.
    private func makeClient(_ parameters: ProviderParameters) throws -> AWSKMSClient {
        let shared = try AWSSharedConfiguration(environment: remote.kept)
        let region =
            try parameters.string(ParameterKey.region) ?? environmentValue("AWS_REGION", "AWS_DEFAULT_REGION")
            ?? shared.settings["region"]
        guard let region, !region.isEmpty else {
            throw CertificateProviderError.invalidParameter(
                "the AWS region is not set: give parameter 'region', set AWS_REGION, or give the profile "
                    + "'\(shared.profile)' a region in ~/.aws/config"
            )
        }
        let (accessKeyID, secretAccessKey, sessionToken) = try credentials(parameters, shared)
        var endpointParameters = parameters
        if try parameters.url(ParameterKey.endpointURL) == nil {
            let configured = environmentValue("AWS_ENDPOINT_URL_KMS", "AWS_ENDPOINT_URL")
            endpointParameters[ParameterKey.endpointURL] = .string(configured ?? "https://kms.\(region).amazonaws.com/")
        }
        let (url, policy) = try base.endpoint(
            [ParameterKey.endpointURL],
            in: endpointParameters,
            missing: "parameter 'endpointURL' (or AWS_ENDPOINT_URL_KMS, AWS_ENDPOINT_URL) is not a URL"
        )
        let signer = SigV4Signer(
            credentials: .init(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, sessionToken: sessionToken),
            region: region,
            service: "kms"
        )
        return AWSKMSClient(
            configuration: .init(
                endpoint: url.path.isEmpty ? url.appendingPathComponent("") : url,
                signer: signer,
                timeout: try RemoteProviderParameters.timeout(parameters),
                additionalHeaders: base.additionalHeaders
            ),
            transport: try base.transport(for: parameters, endpointPolicy: policy)
        )
    }

    /// The access key, secret key and session token: the parameters, else `AWS_ACCESS_KEY_ID` and
    /// `AWS_SECRET_ACCESS_KEY` (with `AWS_SESSION_TOKEN`), else the profile's shared credentials.
    private func credentials(
        _ parameters: ProviderParameters,
        _ shared: AWSSharedConfiguration
    ) throws -> (String, Secret, Secret?) {
        let fromParameters = try parameters.string(ParameterKey.accessKeyID)
        let fromEnvironment = environmentValue("AWS_ACCESS_KEY_ID")
        guard let accessKeyID = fromParameters ?? fromEnvironment ?? shared.credentials["aws_access_key_id"],
            !accessKeyID.isEmpty
        else {
            throw CertificateProviderError.invalidParameter(
                "the AWS access key ID is not set: give parameter 'accessKeyID', set AWS_ACCESS_KEY_ID, or give the "
                    + "profile '\(shared.profile)' credentials in \(shared.credentialsPath)"
            )
        }
        // The secret and token come from where the key ID came from, never mixed across sources.
        let fileSecret = shared.credentials["aws_secret_access_key"].map(Secret.init)
        let fileToken = shared.credentials["aws_session_token"].map(Secret.init)
        let secretAccessKey =
            try parameters.secret(ParameterKey.secretAccessKey)
            ?? (fromParameters != nil || fromEnvironment != nil
                ? environmentValue("AWS_SECRET_ACCESS_KEY").map(Secret.init) : fileSecret)
        guard let secretAccessKey, !secretAccessKey.isEmpty else {
            throw CertificateProviderError.invalidParameter(
                "the AWS secret access key is not set: give parameter 'secretAccessKey' (--param-env "
                    + "secretAccessKey=VAR), set AWS_SECRET_ACCESS_KEY, or give the profile '\(shared.profile)' one in "
                    + "\(shared.credentialsPath)"
            )
        }
        let sessionToken =
            try parameters.secret(ParameterKey.sessionToken)
            ?? (fromParameters != nil || fromEnvironment != nil
                ? environmentValue("AWS_SESSION_TOKEN").map(Secret.init) : fileToken)
        return (accessKeyID, secretAccessKey, sessionToken)
    }

    /// The first of `names` set (not empty) in the environment.
    private func environmentValue(_ names: String...) -> String? {
        let environment = remote.kept
        return names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
    }
}

extension AWSKMSProvider: RemoteProvider {
    /// This process's environment, for the initializer that is not given one.
    public static var initialKept: [String: String] { ProcessInfo.processInfo.environment }
}
