public import CertificateProviders
public import Foundation
public import HTTPClient
import JSON
import RemoteProviderSupport

/// A client for the two routes of the Vault / OpenBao transit secrets engine that signing needs:
/// `GET /v1/<mount>/keys/<name>` (the key's type and public keys) and
/// `POST /v1/<mount>/sign/<name>/<hash>` with `prehashed: true` (signatures of digests made here,
/// `batch_input` for several).
///
/// Every request carries `X-Vault-Token` (and `X-Vault-Namespace` when set). Both routes change
/// nothing on the server, so both are retried on 429 and 5xx answers and on dropped connections
/// through ``Configuration/retryPolicy`` (with jitter, so throttled clients spread out).
///
/// Errors (`CertificateProviderError`), each naming the key and carrying the server's `errors`:
/// `.authenticationFailed` for 401/403 (token refused or without the policy); `.invalidParameter`
/// for a key or mount that does not exist; `.unsupportedOperation` for a key that cannot sign;
/// `.serverRejected` for other 4xx; `.network` for 5xx and 429 after the last attempt, connection
/// failures and answers that are not the protocol; `.timeout`; `.cancelled`. The token never
/// appears in an error.
public struct VaultTransitClient: Sendable {
    /// Where the server is and how to talk to it; every field documents its default.
    public struct Configuration: Sendable {
        /// The server's address (`https://vault.example:8200`); routes live under `<base>/v1/`.
        public var baseURL: URL
        /// The transit engine's mount path (default `transit`).
        public var mount: String
        /// The token sent as `X-Vault-Token`.
        public var token: Secret
        /// The namespace sent as `X-Vault-Namespace` (default nil: none).
        public var namespace: String?
        /// Seconds an HTTP exchange may take (default 30).
        public var timeout: TimeInterval
        /// Which URLs are allowed (default: HTTPS, or HTTP to loopback only).
        public var endpointPolicy: RemoteEndpointPolicy
        /// When to send a request again (default: 5 attempts, 0.2 s doubling to 3 s, jitter 0.5, on
        /// 429, 500, 502, 503, 504 and dropped connections).
        public var retryPolicy: RetryPolicy
        /// Extra headers sent with every request (default none).
        package var additionalHeaders: [(name: String, value: String)] = []

        /// The default retry policy (see ``retryPolicy``).
        public static let defaultRetryPolicy = RetryPolicy(
            maxAttempts: 5,
            initialBackoff: 0.2,
            backoffMultiplier: 2,
            maxBackoff: 3,
            retryableStatuses: [429, 500, 502, 503, 504],
            jitter: 0.5
        )

        /// Creates a configuration; every argument documents its default above.
        public init(
            baseURL: URL,
            mount: String = "transit",
            token: Secret,
            namespace: String? = nil,
            timeout: TimeInterval = 30,
            endpointPolicy: RemoteEndpointPolicy = .default,
            retryPolicy: RetryPolicy = Configuration.defaultRetryPolicy
        ) {
            self.baseURL = baseURL
            self.mount = mount
            self.token = token
            self.namespace = namespace
            self.timeout = timeout
            self.endpointPolicy = endpointPolicy
            self.retryPolicy = retryPolicy
        }

        /// `<base>/v1/<mount>/<route…>`.
        public func routeURL(_ route: [String]) -> URL {
            let mountParts = mount.split(separator: "/").map(String.init)
            return (["v1"] + mountParts + route).reduce(baseURL) { $0.appendingPathComponent($1) }
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    private let transport: any HTTPTransport

    /// Creates a client; no request is made.
    /// - Parameters:
    ///   - configuration: where the server is.
    ///   - transport: the networking; nil uses ``CurlTransport`` with the configuration's endpoint policy.
    public init(configuration: Configuration, transport: (any HTTPTransport)? = nil) {
        self.configuration = configuration
        self.transport = SecretRedactingTransport(
            transport ?? CurlTransport(endpointPolicy: configuration.endpointPolicy),
            secrets: [configuration.token]
        )
    }

    /// `GET keys/<name>`: the key's type, versions and public keys.
    /// - Throws: as the type's documentation says.
    public func key(_ name: String) async throws -> VaultTransitKeyInfo {
        let request = try makeRequest(.get, ["keys", name])
        let response = try await CertificateProviderError.convertingHTTPErrors {
            try await configuration.retryPolicy.send(request, over: transport, repeatable: true)
        }
        guard response.isSuccess else { throw failure("reading transit key '\(name)'", response, key: name) }
        let context = "Vault transit keys/\(name)"
        let body = try JSONObjectReader(try response.json(context: context), context: context, errorCode: .network)
        return try VaultTransitKeyInfo(data: try body.object("data"))
    }

    /// `POST sign/<name>/<hash>`: signatures of `digests`, in order, made by `version` of the key.
    /// - Parameters:
    ///   - name: the key.
    ///   - version: the key version (`key_version`).
    ///   - digests: the digests (`prehashed: true`); one goes as `input`, several as `batch_input`.
    ///   - hashAlgorithm: `sha2-256`, `sha2-384` or `sha2-512`.
    ///   - signatureAlgorithm: `pkcs1v15` or `pss` for RSA keys (PSS with a salt as long as the hash),
    ///     nil for EC keys (which sign DER `ECDSA-Sig-Value`s, `marshaling_algorithm: asn1`).
    /// - Returns: the raw signature values (not yet checked: the caller verifies them).
    /// - Throws: `.network` when an entry failed or was made by another version; as the type's
    ///   documentation says.
    public func sign(
        key name: String,
        version: Int,
        digests: [[UInt8]],
        hashAlgorithm: String,
        signatureAlgorithm: String?
    ) async throws -> [[UInt8]] {
        var body: [String: JSONValue] = [
            "prehashed": true, "key_version": .integer(version), "marshaling_algorithm": "asn1",
        ]
        let inputs = digests.map { JSONValue.string(Data($0).base64EncodedString()) }
        if inputs.count == 1 {
            body["input"] = inputs[0]
        } else {
            body["batch_input"] = .array(inputs.map { ["input": $0] })
        }
        if let signatureAlgorithm {
            body["signature_algorithm"] = .string(signatureAlgorithm)
            if signatureAlgorithm == "pss" { body["salt_length"] = "hash" }
        }
        var request = try makeRequest(.post, ["sign", name, hashAlgorithm])
        try request.setJSONBody(.object(body))
        let response = try await CertificateProviderError.convertingHTTPErrors {
            try await configuration.retryPolicy.send(request, over: transport, repeatable: true)
        }
        guard response.isSuccess else { throw failure("signing with transit key '\(name)'", response, key: name) }
        let context = "Vault transit sign/\(name)"
        let data = try JSONObjectReader(try response.json(context: context), context: context, errorCode: .network)
            .object("data")
        let results = inputs.count == 1 ? [data] : try data.objects("batch_results")
        guard results.count == digests.count else {
            throw CertificateProviderError(
                .network,
                "\(context): the server returned \(results.count) signatures for \(digests.count) digests"
            )
        }
        return try results.enumerated().map { index, result in
            if let error = try result.optionalString("error"), !error.isEmpty {
                throw CertificateProviderError(.network, "\(context): entry \(index + 1) failed: \(error.prefix(300))")
            }
            return try VaultTransitClient.decodeSignature(try result.string("signature"), version: version, context)
        }
    }

    /// The bytes of a `vault:v<N>:<base64>` signature made by `version`.
    /// - Throws: `.network` for another shape or another version.
    package static func decodeSignature(_ text: String, version: Int, _ context: String) throws -> [UInt8] {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "vault", let data = Data(base64Encoded: String(parts[2])), !data.isEmpty
        else {
            throw CertificateProviderError(.network, "\(context): the signature is not 'vault:v<N>:<base64>'")
        }
        guard parts[1] == "v\(version)" else {
            throw CertificateProviderError(
                .network,
                "\(context): the server signed with key version \(parts[1].dropFirst()), not \(version)"
            )
        }
        return Array(data)
    }

    private func makeRequest(_ method: HTTPMethod, _ route: [String]) throws -> HTTPRequest {
        let url = configuration.routeURL(route)
        try CertificateProviderError.convertingHTTPErrors { try configuration.endpointPolicy.validate(url) }
        var request = HTTPRequest(method: method, url: url, timeout: configuration.timeout)
        request.setHeader("X-Vault-Token", configuration.token.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
        if let namespace = configuration.namespace, !namespace.isEmpty {
            request.setHeader("X-Vault-Namespace", namespace)
        }
        for header in configuration.additionalHeaders { request.setHeader(header.name, header.value) }
        return request
    }

    private func unknownKey(_ operation: String, _ status: Int, key: String, server: String) -> CertificateProviderError
    {
        .invalidParameter(
            "Vault \(operation): there is no transit key '\(key)' at mount '\(configuration.mount)' on \(server) "
                + "(HTTP \(status)); check parameter 'key'"
        )
    }

    /// The error for a failed answer to `operation` (see the type's documentation).
    private func failure(_ operation: String, _ response: HTTPResponse, key: String) -> CertificateProviderError {
        let errors = ((try? JSONValue(parsing: response.body))?["errors"]?.arrayValue ?? []).compactMap(\.stringValue)
        let text = errors.joined(separator: "; ").replacingOccurrences(of: "\n", with: " ").prefix(300)
        let message = text.isEmpty ? "" : ": \(text)"
        let status = response.status
        let lower = text.lowercased()
        let server = configuration.baseURL.host ?? configuration.baseURL.absoluteString
        switch status {
        case 401, 403:
            return CertificateProviderError(
                .authenticationFailed,
                "Vault \(operation): the server refused the token (HTTP \(status))\(message); check parameter "
                    + "'token' and that its policy allows read on \(configuration.mount)/keys/\(key) and update on "
                    + "\(configuration.mount)/sign/\(key)"
            )
        case 404 where lower.contains("no handler for route"):
            return .invalidParameter(
                "Vault \(operation): no transit engine is mounted at '\(configuration.mount)' on \(server) "
                    + "(HTTP 404); check parameter 'mount' (enable one with: bao secrets enable transit)"
            )
        case 404:
            return unknownKey(operation, status, key: key, server: server)
        case 400 where lower.contains("key not found"):
            return unknownKey(operation, status, key: key, server: server)
        case 400 where lower.contains("does not support signing"):
            return .unsupportedOperation(
                "Vault \(operation): the key cannot sign\(message); use a signing key (type ecdsa-p256, ecdsa-p384, "
                    + "rsa-2048, rsa-3072 or rsa-4096)"
            )
        case 429:
            return CertificateProviderError(
                .network,
                "Vault \(operation): the server is throttling requests (HTTP 429, \(configuration.retryPolicy.maxAttempts) "
                    + "attempts)\(message); try again later"
            )
        case 400..<500:
            return CertificateProviderError(
                .serverRejected,
                "Vault \(operation): the server refused the request (HTTP \(status))\(message)"
            )
        default:
            return CertificateProviderError(
                .network,
                "Vault \(operation): the server failed (HTTP \(status), \(configuration.retryPolicy.maxAttempts) "
                    + "attempts)\(message); try again later"
            )
        }
    }
}
