public import CertificateProviders
import Foundation
public import RemoteSigning
import Synchronization

/// The Foresight Mobile Platform DSS as a `CertificateProvider` (ID ``CertificateProviders/ProviderID/fmpDSS``)
/// with the platform's signature history (`SignatureHistoryProviding`).
///
/// Parameters (``ParameterKey``):
/// | key | type | required | meaning |
/// |---|---|---|---|
/// | `url` | URL | yes | the platform URL (`https://…`; `http://` only to loopback unless `allowInsecureHTTP`) |
/// | `apiVersion` | string | no (`v1`) | the API version |
/// | `environment` | string | yes | the environment |
/// | `project` | string | yes | the project |
/// | `device` | string | no (host name) | the device id |
/// | `username` | string | yes | the platform user |
/// | `password` | secret | yes | the platform password |
/// | `dssPassword` | secret | yes | the DSS password (lists the certificates) |
/// | `certificateID` | integer | when the user has several | the DSS certificate to use |
/// | `pin` | secret | no | the certificate PIN (kept for callers; the platform checks it when signing) |
/// | `allowInsecureHTTP` | boolean | no (false) | allow `http://` to non-loopback hosts |
/// | `timeout` | integer | no (30) | seconds per HTTP exchange |
/// | `trustedCAFile` | string (path) | no | PEM CAs trusted for the server besides the system store (``RemoteTLSParameters``) |
/// | `clientIdentity` | string | no | the alias of the TLS client identity (opened with the provider's `clientIdentityLookup`) |
/// | `clientIdentityPassword` | secret | no | the password of that identity |
///
/// ``initialize(options:)`` logs in, lists the certificates and returns an identity whose
/// certificate comes from the server and whose key is a `ServerHeldSigningKey` (``ServerHeldSigningKey/fmpDSS(certificate:certificateID:)``) (the key never
/// leaves the server; signing arbitrary digests is not offered by the platform). The identity is kept
/// in memory: ``storedCertificate()`` returns it until ``deleteStoredCertificate()``.
public final class FMPDSSProvider: CertificateProvider, SignatureHistoryProviding {
    /// The parameter keys this provider reads.
    public enum ParameterKey {
        /// The `url` parameter (see the table above).
        public static let url = ProviderParameters.Key.url
        /// The `apiVersion` parameter (see the table above).
        public static let apiVersion: ProviderParameters.Key = "apiVersion"
        /// The `environment` parameter (see the table above).
        public static let environment: ProviderParameters.Key = "environment"
        /// The `project` parameter (see the table above).
        public static let project: ProviderParameters.Key = "project"
        /// The `device` parameter (see the table above).
        public static let device: ProviderParameters.Key = "device"
        /// The `username` parameter (see the table above).
        public static let username: ProviderParameters.Key = "username"
        /// The `password` parameter (see the table above).
        public static let password: ProviderParameters.Key = "password"
        /// The `dssPassword` parameter (see the table above).
        public static let dssPassword: ProviderParameters.Key = "dssPassword"
        /// The `certificateID` parameter (see the table above).
        public static let certificateID: ProviderParameters.Key = "certificateID"
        /// The `pin` parameter (see the table above).
        public static let pin: ProviderParameters.Key = "pin"
        /// The `allowInsecureHTTP` parameter (see the table above).
        public static let allowInsecureHTTP: ProviderParameters.Key = "allowInsecureHTTP"
        /// The `timeout` parameter (see the table above).
        public static let timeout: ProviderParameters.Key = "timeout"

        /// The `trustedCAFile` parameter (see the table above).
        public static let trustedCAFile = RemoteTLSParameters.trustedCAFile
        /// The `clientIdentity` parameter (see the table above).
        public static let clientIdentity = RemoteTLSParameters.clientIdentity
        /// The `clientIdentityPassword` parameter (see the table above).
        public static let clientIdentityPassword = RemoteTLSParameters.clientIdentityPassword

        /// Every key the provider accepts.
        public static let all: Set<ProviderParameters.Key> = Set([url, apiVersion, environment, project, device, username, password,
                                                                 dssPassword, certificateID, pin, allowInsecureHTTP, timeout])
            .union(RemoteTLSParameters.keys)
    }

    private struct State {
        var parameters: ProviderParameters
        var identity: SigningIdentity?
        var client: FMPClient?
    }

    /// Always ``CertificateProviders/ProviderID/fmpDSS`` (`fmp-dss`).
    public let providerID: ProviderID = .fmpDSS
    private let transport: (any HTTPTransport)?
    private let clientIdentityLookup: ClientIdentityLookup?
    private let state: Mutex<State>

    /// Creates a provider.
    /// - Parameters:
    ///   - parameters: initial parameters (see the table in the type's documentation).
    ///   - transport: the networking; nil uses ``CurlTransport``.
    ///   - clientIdentityLookup: opens the `clientIdentity` parameter's alias (default nil: that
    ///     parameter is refused).
    public init(parameters: ProviderParameters = ProviderParameters(), transport: (any HTTPTransport)? = nil,
                clientIdentityLookup: ClientIdentityLookup? = nil) {
        self.transport = transport
        self.clientIdentityLookup = clientIdentityLookup
        state = Mutex(State(parameters: parameters))
    }

    /// The current parameters (secrets stay redacted in `description`).
    public var parameters: ProviderParameters { state.withLock { $0.parameters } }

    /// Replaces the parameters.
    /// - Throws: `.invalidParameter` naming an unknown key or a value of the wrong type.
    public func setParameters(_ parameters: ProviderParameters) throws {
        try FMPDSSProvider.check(parameters)
        state.withLock { $0.parameters = parameters }
    }

    /// Logs in, lists the certificates and returns the chosen one as an identity (see the type's documentation).
    /// - Throws: `.invalidParameter` for missing or wrong parameters or a certificate id the user
    ///   does not have; `.authenticationFailed`, `.wrongPassword` (DSS password), `.network`, `.timeout`.
    public func initialize(options: ProviderParameters) async throws -> SigningIdentity {
        let merged = parameters.merging(options)
        try FMPDSSProvider.check(merged)
        let configuration = try FMPDSSProvider.configuration(from: merged)
        let client = FMPClient(configuration: configuration,
                               transport: try RemoteTLSParameters.transport(for: merged, endpointPolicy: configuration.endpointPolicy,
                                                                            given: transport, identityLookup: clientIdentityLookup))
        _ = try await client.auth(username: try merged.requiredString(ParameterKey.username),
                                  password: try merged.requiredSecret(ParameterKey.password))
        let certificates = try await client.certificates(dssPassword: try merged.requiredSecret(ParameterKey.dssPassword)).value
        let chosen: FMPCertificate
        let available = certificates.map { String($0.id) }.joined(separator: ", ")
        if let wanted = try merged.integer(ParameterKey.certificateID) {
            guard let match = certificates.first(where: { $0.id == wanted }) else {
                throw CertificateProviderError.invalidParameter("certificate \(wanted) is not among the user's DSS certificates (\(available.isEmpty ? "none" : available))")
            }
            chosen = match
        } else if certificates.count == 1 {
            chosen = certificates[0]
        } else {
            throw CertificateProviderError.invalidParameter(certificates.isEmpty
                ? "the user has no DSS certificates"
                : "the user has several DSS certificates (\(available)); set parameter 'certificateID'")
        }
        let identity = SigningIdentity(certificate: chosen.certificate, chain: [],
                                       key: ServerHeldSigningKey.fmpDSS(certificate: chosen.certificate, certificateID: chosen.id))
        state.withLock {
            $0.identity = identity
            $0.client = client
        }
        return identity
    }

    /// The identity of the last successful ``initialize(options:)``, or nil.
    public func storedCertificate() throws -> SigningIdentity? { state.withLock { $0.identity } }

    /// Forgets the identity and the logged-in client.
    public func deleteStoredCertificate() throws {
        state.withLock {
            $0.identity = nil
            $0.client = nil
        }
    }

    /// The logged-in client of the last ``initialize(options:)`` (for calls the protocol has no
    /// place for, such as signing a resource cell), or nil.
    public var client: FMPClient? { state.withLock { $0.client } }

    /// The user's signatures on the platform.
    /// - Throws: `.authenticationFailed` before ``initialize(options:)``; as ``FMPClient/signs()``.
    public func signatures() async throws -> [RemoteSignatureRecord] {
        let signs = try await connectedClient().signs().value
        return signs.map { sign in
            RemoteSignatureRecord(id: String(sign.id), createdAt: sign.createdAt, certificateID: String(sign.certificateID),
                                  summary: "\(sign.resource) / \(sign.table) / \(sign.column) / row \(sign.hhiveID)",
                                  signature: sign.signature.isEmpty ? nil : sign.signature)
        }
    }

    /// Removes a signature from the platform's history.
    /// - Throws: `.invalidParameter` when `id` is not an integer; `.notStored` when the platform
    ///   has no such signature; as ``FMPClient/removeSign(id:)``.
    public func removeSignature(id: String) async throws {
        guard let number = Int(id) else { throw CertificateProviderError.invalidParameter("an FMP signature id is an integer, not '\(id)'") }
        _ = try await connectedClient().removeSign(id: number)
    }

    private func connectedClient() throws -> FMPClient {
        guard let client else {
            throw CertificateProviderError(.authenticationFailed, "the FMP DSS provider is not logged in; call initialize(options:) first")
        }
        return client
    }

    // MARK: Parameters

    private static func check(_ parameters: ProviderParameters) throws {
        for key in parameters.keys where !ParameterKey.all.contains(key) {
            throw CertificateProviderError.invalidParameter("parameter '\(key)' is not known to the fmp-dss provider (known: \(ParameterKey.all.map(\.rawValue).sorted().joined(separator: ", ")))")
        }
        _ = try parameters.url(ParameterKey.url)
        for key in [ParameterKey.apiVersion, ParameterKey.environment, ParameterKey.project, ParameterKey.device, ParameterKey.username] {
            _ = try parameters.string(key)
        }
        for key in [ParameterKey.password, ParameterKey.dssPassword, ParameterKey.pin] { _ = try parameters.secret(key) }
        _ = try parameters.integer(ParameterKey.certificateID)
        _ = try parameters.integer(ParameterKey.timeout)
        _ = try parameters.boolean(ParameterKey.allowInsecureHTTP)
        try RemoteTLSParameters.check(parameters)
    }

    private static func configuration(from parameters: ProviderParameters) throws -> FMPClient.Configuration {
        guard let url = try parameters.url(ParameterKey.url) else { throw CertificateProviderError.invalidParameter("parameter 'url' is required") }
        let policy = RemoteEndpointPolicy(allowsInsecureHTTP: try parameters.boolean(ParameterKey.allowInsecureHTTP) ?? false)
        try policy.validate(url)
        return FMPClient.Configuration(
            apiVersion: try parameters.string(ParameterKey.apiVersion) ?? "v1", host: url,
            environment: try parameters.requiredString(ParameterKey.environment),
            project: try parameters.requiredString(ParameterKey.project),
            device: try parameters.string(ParameterKey.device) ?? ProcessInfo.processInfo.hostName,
            timeout: TimeInterval(try parameters.integer(ParameterKey.timeout) ?? 30),
            endpointPolicy: policy)
    }
}
