public import CertificateProviders
import Foundation
public import RemoteSigning
import Synchronization

/// A Cloud Signature Consortium API v2 service as a `CertificateProvider` (ID ``CertificateProviders/ProviderID/csc``,
/// `csc`): remote qualified signing the European way. The service signs hashes; the CMS / CAdES
/// container is built locally around the returned signature values (the coordinator's external-key
/// path), so its identity's key is a ``CSCSigningKey``.
///
/// Parameters (``ParameterKey``):
/// | key | type | required | meaning |
/// |---|---|---|---|
/// | `url` | URL | yes | the service's base URL (methods at `<url>/csc/v2/…`; `http://` only to loopback unless `allowInsecureHTTP`) |
/// | `clientID` | string | yes | the OAuth 2.0 client (client-credentials grant) |
/// | `clientSecret` | secret | for confidential clients | the client secret (form field `client_secret`) |
/// | `credentialID` | string | no | the credential to sign with; without it, the only credential of the client |
/// | `pin` | secret | when the credential asks | the credential's PIN (`authData` `PIN`) |
/// | `otp` | secret | when the credential asks | a one-time password (`authData` `OTP`) |
/// | `allowInsecureHTTP` | boolean | no (false) | allow `http://` to non-loopback hosts |
/// | `timeout` | integer | no (30) | seconds per HTTP exchange |
/// | `trustedCAFile` | string (path) | no | PEM CAs trusted for the service besides the system store (``RemoteTLSParameters``) |
/// | `clientIdentity` | string | no | the alias of the TLS client identity (opened with the provider's `clientIdentityLookup`) |
/// | `clientIdentityPassword` | secret | no | the password of that identity |
///
/// ``initialize(options:)`` gets a token, finds the credential (`credentials/list` when
/// `credentialID` is absent), reads it (`credentials/info` with the chain) and returns an identity
/// whose certificate and chain come from the service. Signing authorizes and signs on the service
/// each time; ``CSCSigningKey`` explains batches and the check of every returned value. The
/// identity is kept in memory only: ``storedCertificate()`` returns it in the same process and nil
/// before; nothing is written to disk.
public final class CSCProvider: CertificateProvider {
    /// The parameter keys this provider reads.
    public enum ParameterKey {
        /// The `url` parameter (see the table above).
        public static let url = ProviderParameters.Key.url
        /// The `clientID` parameter (see the table above).
        public static let clientID: ProviderParameters.Key = "clientID"
        /// The `clientSecret` parameter (see the table above).
        public static let clientSecret: ProviderParameters.Key = "clientSecret"
        /// The `credentialID` parameter (see the table above).
        public static let credentialID: ProviderParameters.Key = "credentialID"
        /// The `pin` parameter (see the table above).
        public static let pin: ProviderParameters.Key = "pin"
        /// The `otp` parameter (see the table above).
        public static let otp: ProviderParameters.Key = "otp"
        /// The `trustedCAFile` parameter (see the table above).
        public static let trustedCAFile = RemoteTLSParameters.trustedCAFile
        /// The `clientIdentity` parameter (see the table above).
        public static let clientIdentity = RemoteTLSParameters.clientIdentity
        /// The `clientIdentityPassword` parameter (see the table above).
        public static let clientIdentityPassword = RemoteTLSParameters.clientIdentityPassword
        /// The `allowInsecureHTTP` parameter (see the table above).
        public static let allowInsecureHTTP: ProviderParameters.Key = "allowInsecureHTTP"
        /// The `timeout` parameter (see the table above).
        public static let timeout: ProviderParameters.Key = "timeout"

        /// Every key the provider accepts.
        public static let all: Set<ProviderParameters.Key> = Set([
            url, clientID, clientSecret, credentialID, pin, otp, allowInsecureHTTP, timeout,
        ])
        .union(RemoteTLSParameters.keys)
        /// The keys whose values are secrets.
        public static let secrets: Set<ProviderParameters.Key> = [clientSecret, pin, otp, clientIdentityPassword]
    }

    private struct State {
        var parameters: ProviderParameters
        var identity: SigningIdentity?
    }

    /// Always ``CertificateProviders/ProviderID/csc`` (`csc`).
    public let providerID: ProviderID = .csc
    private let transport: (any HTTPTransport)?
    private let additionalHeaders: [(name: String, value: String)]
    private let clientIdentityLookup: ClientIdentityLookup?
    private let state: Mutex<State>

    /// Creates a provider.
    /// - Parameters:
    ///   - parameters: initial parameters (see the table in the type's documentation).
    ///   - transport: the networking; nil uses a ``CurlTransport`` (with `trustedCAFile` and
    ///     `clientIdentity` when set).
    ///   - additionalHeaders: extra headers on every request (default none; tests send the emulator's fault header).
    ///   - clientIdentityLookup: opens the `clientIdentity` parameter's alias (default nil: that
    ///     parameter is refused).
    public init(
        parameters: ProviderParameters = ProviderParameters(),
        transport: (any HTTPTransport)? = nil,
        additionalHeaders: [(name: String, value: String)] = [],
        clientIdentityLookup: ClientIdentityLookup? = nil
    ) {
        self.transport = transport
        self.clientIdentityLookup = clientIdentityLookup
        self.additionalHeaders = additionalHeaders
        state = Mutex(State(parameters: parameters))
    }

    /// The current parameters (secrets stay redacted in `description`).
    public var parameters: ProviderParameters { state.withLock { $0.parameters } }

    /// Replaces the parameters and forgets the identity made with the old ones.
    /// - Throws: `.invalidParameter` naming an unknown key or a value of the wrong type.
    public func setParameters(_ parameters: ProviderParameters) throws {
        try CSCProvider.check(parameters)
        state.withLock {
            $0.parameters = parameters
            $0.identity = nil
        }
    }

    /// Connects, selects the credential and returns its identity (see the type's documentation).
    /// - Throws: `.invalidParameter` for missing or wrong parameters, or a credential the client does
    ///   not have (the reason lists the client's credentials); `.authenticationFailed` for a refused
    ///   client; `.unsupportedOperation` for a disabled key; `.network`, `.timeout`, the TLS codes.
    public func initialize(options: ProviderParameters) async throws -> SigningIdentity {
        let merged = parameters.merging(options)
        try CSCProvider.check(merged)
        let client = try makeClient(merged)
        var credentialID = try merged.string(ParameterKey.credentialID)
        if credentialID == nil {
            let ids = try await client.listCredentials().ids
            guard ids.count == 1 else {
                throw CertificateProviderError.invalidParameter(
                    ids.isEmpty
                        ? "the CSC client '\(try merged.requiredString(ParameterKey.clientID))' has no credentials"
                        : "the CSC client has \(ids.count) credentials (\(ids.joined(separator: ", "))); set parameter 'credentialID'"
                )
            }
            credentialID = ids[0]
        }
        guard let credentialID else {
            throw CertificateProviderError.invalidParameter("parameter 'credentialID' is required")
        }
        let credential: CSCCredential
        do {
            credential = try await client.credentialInfo(credentialID)
        } catch let error as CertificateProviderError where error.code == .serverRejected {
            let known = (try? await client.listCredentials().ids) ?? []
            throw CertificateProviderError.invalidParameter(
                "CSC credential '\(credentialID)' was refused (\(error.reason)); the client has: \(known.isEmpty ? "none" : known.joined(separator: ", "))"
            )
        }
        guard let certificate = credential.certificate else {
            throw CertificateProviderError(
                .network,
                "CSC credential \(credentialID): the service returned no certificate"
            )
        }
        guard credential.keyStatus.lowercased() == "enabled" else {
            throw CertificateProviderError.unsupportedOperation(
                "CSC credential \(credentialID): the key is \(credential.keyStatus)"
            )
        }
        let key = CSCSigningKey(
            credential: credential,
            certificate: certificate,
            client: client,
            pin: try merged.secret(ParameterKey.pin),
            otp: try merged.secret(ParameterKey.otp)
        )
        let identity = SigningIdentity(
            certificate: certificate,
            chain: Array(credential.certificates.dropFirst()),
            key: key
        )
        state.withLock { $0.identity = identity }
        return identity
    }

    /// The identity of this process's last ``initialize(options:)``, else nil (nothing is kept on disk).
    public func storedCertificate() throws -> SigningIdentity? {
        state.withLock { $0.identity }
    }

    /// Forgets the identity in memory (no-op when there is none).
    public func deleteStoredCertificate() throws {
        state.withLock { $0.identity = nil }
    }

    /// The client's credentials with their certificates, keys and auth modes (`credentials/list` with
    /// `credentialInfo`; `credentials/info` for each one the service did not describe).
    /// - Throws: as ``initialize(options:)``.
    public func credentials() async throws -> [CSCCredential] {
        let parameters = self.parameters
        try CSCProvider.check(parameters)
        let client = try makeClient(parameters)
        let list = try await client.listCredentials(details: true)
        var result: [CSCCredential] = []
        for id in list.ids {
            if let described = list.credentials.first(where: { $0.id == id }) {
                result.append(described)
            } else {
                result.append(try await client.credentialInfo(id))
            }
        }
        return result
    }

    // MARK: Parameters

    private static func check(_ parameters: ProviderParameters) throws {
        for key in parameters.keys where !ParameterKey.all.contains(key) {
            throw CertificateProviderError.invalidParameter(
                "parameter '\(key)' is not known to the csc provider (known: \(ParameterKey.all.map(\.rawValue).sorted().joined(separator: ", ")))"
            )
        }
        _ = try parameters.url(ParameterKey.url)
        for key in [ParameterKey.clientID, ParameterKey.credentialID] { _ = try parameters.string(key) }
        for key in ParameterKey.secrets { _ = try parameters.secret(key) }
        try RemoteTLSParameters.check(parameters)
        if let timeout = try parameters.integer(ParameterKey.timeout), timeout <= 0 {
            throw CertificateProviderError.invalidParameter("parameter 'timeout' must be a positive number of seconds")
        }
        _ = try parameters.boolean(ParameterKey.allowInsecureHTTP)
    }

    private func makeClient(_ parameters: ProviderParameters) throws -> CSCClient {
        guard let url = try parameters.url(ParameterKey.url) else {
            throw CertificateProviderError.invalidParameter("parameter 'url' is required")
        }
        guard let clientID = try parameters.string(ParameterKey.clientID), !clientID.isEmpty else {
            throw CertificateProviderError.invalidParameter("parameter 'clientID' is required")
        }
        let policy = RemoteEndpointPolicy(
            allowsInsecureHTTP: try parameters.boolean(ParameterKey.allowInsecureHTTP) ?? false
        )
        try policy.validate(url)
        let configuration = CSCClient.Configuration(
            baseURL: url,
            clientID: clientID,
            clientSecret: try parameters.secret(ParameterKey.clientSecret),
            timeout: TimeInterval(try parameters.integer(ParameterKey.timeout) ?? 30),
            endpointPolicy: policy,
            additionalHeaders: additionalHeaders
        )
        return CSCClient(
            configuration: configuration,
            transport: try RemoteTLSParameters.transport(
                for: parameters,
                endpointPolicy: policy,
                given: transport,
                identityLookup: clientIdentityLookup
            )
        )
    }
}
