// A remote provider written outside swift-certificate-providers on its public products alone
// (CertificateProviders, RemoteProviderSupport, HTTPClient, JSON): a small client of the CSC API v2
// (OAuth 2.0 client credentials, `credentials/info`, `credentials/authorize`, `signatures/signHash`)
// for one credential of SCAL 2 with an RSA key. It is what the "Writing a provider" article walks
// through.

import CertificateProviders
import Foundation
import HTTPClient
import JSON
import RemoteProviderSupport

/// A CSC API v2 credential as a `CertificateProvider` (ID `com.example.csc`).
public final class ExampleCSCProvider: CertificateProvider {
    /// Always `com.example.csc`.
    public let providerID: ProviderID = ExampleCSCProvider.id
    /// The parameters and the identity of the last `initialize(options:)`, with the base every remote
    /// provider holds: `parameters`, `setParameters(_:)` and the stored identity answer from it.
    public let remote: RemoteProviderState<Void>

    /// Makes the provider around `remote`.
    public init(remote: RemoteProviderState<Void>) { self.remote = remote }

    /// Logs in, reads the credential's certificate chain and returns its identity.
    public func initialize(options: ProviderParameters) async throws -> SigningIdentity {
        let merged = try remote.merged(options)
        let client = try await ExampleCSCClient(provider: self, parameters: merged)
        let certificates = try await client.certificates()
        let key = ExampleCSCSigningKey(client: client, certificate: certificates[0])
        return remote.remember(
            SigningIdentity(certificate: certificates[0], chain: Array(certificates.dropFirst()), key: key)
        )
    }
}

extension ExampleCSCProvider: RemoteProvider {
    /// The provider's ID.
    public static var id: ProviderID { "com.example.csc" }

    /// One line saying what the provider is.
    public static var summary: String { "an example CSC API v2 credential, written outside the package" }

    /// The provider's parameters, each declared once; the TLS ones come with `remoteProvider`.
    public static let schema = ProviderParameterSchema.remoteProvider(
        id,
        [
            .init(.url, .url, "the CSC service's base URL"),
            .init("clientID", .string, "the OAuth 2.0 client"),
            .init("clientSecret", .secret, "the client's secret"),
            .init("credentialID", .string, "the credential that signs"),
        ]
    )
}

/// One logged-in conversation with the service.
struct ExampleCSCClient: Sendable {
    let url: URL
    let transport: any HTTPTransport
    let headers: [(name: String, value: String)]
    let token: String
    let credentialID: String

    init(provider: ExampleCSCProvider, parameters: ProviderParameters) async throws {
        let endpoint = try provider.base.endpoint([.url], in: parameters, missing: "parameter 'url' is required")
        url = endpoint.url
        transport = try provider.base.transport(for: parameters, endpointPolicy: endpoint.policy)
        headers = provider.base.additionalHeaders
        credentialID = try parameters.requiredString("credentialID")
        guard let secret = try parameters.secret("clientSecret") else {
            throw CertificateProviderError.invalidParameter("parameter 'clientSecret' is required")
        }
        let slot = SecretSlot(secret)
        var request = HTTPRequest(method: .post, url: url.appendingPathComponent("oauth2/token"), headers: headers)
        request.setFormBody(
            [
                ("grant_type", "client_credentials"),
                ("client_id", try parameters.requiredString("clientID")),
                ("client_secret", slot.placeholder),
            ],
            secrets: [slot]
        )
        // The transport throws `HTTPClientError`; callers of a provider expect `CertificateProviderError`.
        let transport = transport
        let answer = try await CertificateProviderError.convertingHTTPErrors { try await transport.send(request) }
        token = try Self.answer(answer, "oauth2/token").string("access_token")
    }

    /// The credential's certificate, then its chain.
    func certificates() async throws -> [Certificate] {
        let answer = try await call(
            "credentials/info",
            ["credentialID": .string(credentialID), "certificates": "chain"]
        )
        let encoded = try answer.object("cert").array("certificates")
        return try encoded.map { value in
            guard let text = value.stringValue, let der = Data(base64Encoded: text) else {
                throw CertificateProviderError(.network, "CSC credentials/info: a certificate is not base64")
            }
            return try Certificate(derEncoded: Array(der))
        }
    }

    /// Authorizes one hash (SCAL 2 binds the authorization to it) and has it signed.
    func signHash(_ digest: [UInt8], _ algorithm: DigestAlgorithm) async throws -> [UInt8] {
        let hashes: JSONValue = [.string(Data(digest).base64EncodedString())]
        let authorization = try await call(
            "credentials/authorize",
            [
                "credentialID": .string(credentialID), "numSignatures": 1, "hashes": hashes,
                "hashAlgorithmOID": .string(algorithm.oid),
            ]
        )
        let signAlgo: [DigestAlgorithm: String] = [.sha256: "1.2.840.113549.1.1.11", .sha384: "1.2.840.113549.1.1.12"]
        guard let oid = signAlgo[algorithm] else {
            throw CertificateProviderError.unsupportedOperation("the example provider signs SHA-256 or SHA-384 only")
        }
        let answer = try await call(
            "signatures/signHash",
            [
                "credentialID": .string(credentialID), "SAD": .string(try authorization.string("SAD")),
                "hashes": hashes, "hashAlgorithmOID": .string(algorithm.oid), "signAlgo": .string(oid),
            ]
        )
        let signatures = try answer.array("signatures").compactMap(\.stringValue).compactMap { Data(base64Encoded: $0) }
        return signatures.first.map(Array.init) ?? []
    }

    private func call(_ method: String, _ body: JSONValue) async throws -> JSONObjectReader {
        var request = HTTPRequest(method: .post, url: url.appendingPathComponent("csc/v2/" + method), headers: headers)
        request.setHeader("Authorization", "Bearer " + token)
        try request.setJSONBody(body)
        return try Self.answer(
            try await CertificateProviderError.convertingHTTPErrors { try await transport.send(request) },
            method
        )
    }

    private static func answer(_ response: HTTPResponse, _ method: String) throws -> JSONObjectReader {
        guard response.isSuccess else {
            throw CertificateProviderError(
                response.status == 401 ? .authenticationFailed : .serverRejected,
                "CSC \(method) answered \(response.status): \(String(decoding: response.body.prefix(200), as: UTF8.self))"
            )
        }
        return try JSONObjectReader(
            response.json(context: "CSC \(method)"),
            context: "CSC \(method)",
            errorCode: .network
        )
    }
}

/// The credential's key: each digest is authorized and signed by the service, and the value it
/// returns is checked against the certificate before it goes into a signature.
struct ExampleCSCSigningKey: SigningKey {
    let client: ExampleCSCClient
    let certificate: Certificate

    var publicKeyAlgorithm: PublicKeyAlgorithm { certificate.publicKeyAlgorithm }
    var keySize: Int { certificate.publicKeySize }
    var publicKeyDERRepresentation: [UInt8] { certificate.publicKeyDERRepresentation }

    func signature(
        forDigest digest: [UInt8],
        digestAlgorithm: DigestAlgorithm,
        scheme: SignatureScheme
    )
        async throws -> [UInt8]
    {
        let value = try await client.signHash(digest, digestAlgorithm)
        try certificate.verifyServerSignatures(
            [value],
            forDigests: [digest],
            digestAlgorithm: digestAlgorithm,
            scheme: scheme,
            service: "CSC credential \(client.credentialID): signatures/signHash"
        )
        return value
    }
}
