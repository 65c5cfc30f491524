import CertificateProviders
public import HTTPClient
public import JSON

extension HTTPResponse {
    /// The body parsed as JSON, for a remote provider's client.
    /// - Throws: `.network` naming `context` when the body is not JSON (the server did not speak
    ///   the protocol).
    public func json(context: String) throws -> JSONValue {
        do {
            return try JSONValue(parsing: body)
        } catch {
            throw CertificateProviderError(
                .network,
                "\(context): the server answered HTTP \(status) with a body that is not JSON (\(body.count) bytes)"
            )
        }
    }
}
