public import CertificateProviders
public import Foundation
public import HTTPClient

/// `BinaryHTTPFetching` over any `HTTPTransport`: how `Signing` reaches time-stamping
/// authorities, OCSP responders and CRL distribution points. The transport's `HTTPClientError`s
/// arrive as `CertificateProviderError`s with the same code names.
///
/// Plain `http://` is allowed to any host here, on purpose: TSA replies, OCSP responses and CRLs
/// are signed objects whose signatures are checked after they arrive (RFC 3161, RFC 6960 and
/// RFC 5280 all run over plain HTTP in practice), and nothing secret is sent. Every URL is still
/// checked with a `RemoteEndpointPolicy` that has `allowsInsecureHTTP`
/// set, so schemes other than `http` and `https` are refused. The transport given must itself
/// allow such URLs (a transport built with the default policy refuses `http://` to non-loopback
/// hosts; build it with `allowsInsecureHTTP` for these fetches).
public struct TransportBinaryFetcher: BinaryHTTPFetching {
    /// The transport requests go through.
    public let transport: any HTTPTransport
    /// The policy URLs are checked with (http allowed, see the type's documentation).
    public let endpointPolicy: RemoteEndpointPolicy

    /// Creates a fetcher over `transport`.
    public init(transport: any HTTPTransport) {
        self.transport = transport
        self.endpointPolicy = RemoteEndpointPolicy(allowsInsecureHTTP: true)
    }

    /// Sends a `POST` and returns the 2xx answer (see `BinaryHTTPFetching`).
    public func post(
        _ url: URL,
        contentType: String,
        body: [UInt8],
        timeout: TimeInterval,
        maximumBytes: Int
    ) async throws -> (contentType: String?, body: [UInt8]) {
        let request = HTTPRequest(
            method: .post,
            url: url,
            headers: [("Content-Type", contentType), ("Accept", "*/*")],
            body: body,
            timeout: timeout
        )
        return try await exchange(request, maximumBytes: maximumBytes)
    }

    /// Sends a `GET` and returns the 2xx answer (see `BinaryHTTPFetching`).
    public func get(
        _ url: URL,
        timeout: TimeInterval,
        maximumBytes: Int
    ) async throws -> (contentType: String?, body: [UInt8]) {
        let request = HTTPRequest(method: .get, url: url, headers: [("Accept", "*/*")], timeout: timeout)
        return try await exchange(request, maximumBytes: maximumBytes)
    }

    /// Checks the URL against the policy, sends the request and checks the answer; the transport's
    /// errors become `CertificateProviderError`s with the same code names.
    private func exchange(
        _ request: HTTPRequest,
        maximumBytes: Int
    ) async throws -> (contentType: String?, body: [UInt8]) {
        try CertificateProviderError.convertingHTTPErrors { try endpointPolicy.validate(request.url) }
        let response = try await CertificateProviderError.convertingHTTPErrors { try await transport.send(request) }
        return try check(response, url: request.url, maximumBytes: maximumBytes)
    }

    private func check(
        _ response: HTTPResponse,
        url: URL,
        maximumBytes: Int
    ) throws -> (contentType: String?, body: [UInt8]) {
        guard response.isSuccess else {
            throw CertificateProviderError(.serverRejected, "\(url.absoluteString) answered HTTP \(response.status)")
        }
        guard response.body.count <= maximumBytes else {
            throw CertificateProviderError(
                .network,
                "\(url.absoluteString) answered \(response.body.count) bytes, more than the \(maximumBytes) allowed"
            )
        }
        return (response.header("Content-Type"), response.body)
    }
}
