public import Foundation

/// Fetches binary objects over HTTP: RFC 3161 timestamp replies, OCSP responses and CRLs.
///
/// The core defines this small seam so that signing and validation (module `Signing`) can reach a
/// time-stamping authority, an OCSP responder or a CRL distribution point without depending on a
/// concrete HTTP stack. `HTTPClient` implements it over its `HTTPTransport`
/// (`TransportBinaryFetcher`); apps may bring their own.
///
/// Contract:
/// - a 2xx answer returns its `Content-Type` and body; any other status throws `.serverRejected`
///   naming the status;
/// - a body longer than `maximumBytes` throws `.network` (the object cannot be what was asked for);
/// - no answer within `timeout` seconds throws `.timeout`; connection failures throw `.network`;
///   task cancellation throws `.cancelled`;
/// - plain `http://` is acceptable for these objects: each is signed, and its signature is checked
///   after it arrives, so the channel needs no confidentiality or integrity of its own.
public protocol BinaryHTTPFetching: Sendable {
    /// Sends `body` with `POST` and returns the answer (a TSA query, an OCSP request).
    ///
    /// - Parameters:
    ///   - url: the service URL.
    ///   - contentType: the request's media type (`application/timestamp-query`,
    ///     `application/ocsp-request`).
    ///   - body: the DER request.
    ///   - timeout: seconds for the whole exchange.
    ///   - maximumBytes: the largest body accepted.
    /// - Returns: the answer's media type (nil when the server sent none) and its body.
    /// - Throws: `.serverRejected`, `.network`, `.timeout`, `.cancelled`, `.invalidParameter` for a
    ///   URL the fetcher refuses.
    func post(
        _ url: URL,
        contentType: String,
        body: [UInt8],
        timeout: TimeInterval,
        maximumBytes: Int
    ) async throws -> (contentType: String?, body: [UInt8])

    /// Fetches `url` with `GET` (a CRL distribution point).
    ///
    /// - Parameters:
    ///   - url: the object's URL.
    ///   - timeout: seconds for the whole exchange.
    ///   - maximumBytes: the largest body accepted.
    /// - Returns: the answer's media type (nil when the server sent none) and its body.
    /// - Throws: as ``post(_:contentType:body:timeout:maximumBytes:)``.
    func get(_ url: URL, timeout: TimeInterval, maximumBytes: Int) async throws -> (contentType: String?, body: [UInt8])
}
