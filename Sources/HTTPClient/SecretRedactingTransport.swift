import Foundation
import JSON
public import Secrets
import Synchronization

/// A transport in front of another that cuts every secret it knows out of what a server answers
/// before a client can copy that text into an error: a server (or a proxy in front of it) that
/// reflects the request in its error page would otherwise have the error print the token, password
/// or PIN that went with the request.
///
/// It knows the secrets it was made with (a client secret, a key the client never sends) and every
/// secret a request sent through it carried: the values of credential headers (`Authorization`
/// with the credential after its scheme and, for `Basic`, the decoded `id:secret` and its secret,
/// `Proxy-Authorization`, `Cookie`, and any header whose name mentions a token, a secret, a
/// password, an API key or a session) and the secrets of ``HTTPRequest/bodySecrets``. In every
/// answer that is not a success (status outside 200–299) each of them, as sent, percent-encoded
/// and JSON-escaped, becomes ``replacement`` in the body and in header values. A successful answer
/// is passed on untouched: it is the protocol, and the client reads it as such.
///
/// Secrets shorter than ``minimumLength`` bytes are kept out of it: cutting every `42` out of a
/// server's text would mangle it, not protect anything.
///
/// Every remote client of this package sends through one; an app's own client can too:
///
/// ```swift
/// let transport = SecretRedactingTransport(CurlTransport(), secrets: [apiKey])
/// ```
public final class SecretRedactingTransport: HTTPTransport {
    /// What a secret is replaced with: `[redacted]`.
    public static let replacement = "[redacted]"
    /// The shortest secret it cuts out, in bytes: 4.
    public static let minimumLength = 4

    private let wrapped: any HTTPTransport
    private let known: Mutex<[Secret]>

    /// Wraps `transport`.
    /// - Parameters:
    ///   - transport: the transport that sends the requests.
    ///   - secrets: secrets to cut out besides those the requests carry (nil entries are skipped).
    public init(_ transport: any HTTPTransport, secrets: [Secret?] = []) {
        wrapped = transport
        known = Mutex([])
        remember(secrets.compactMap { $0 })
    }

    /// Adds secrets to cut out of later answers.
    public func remember(_ secrets: [Secret]) {
        let usable = secrets.filter { $0.count >= Self.minimumLength }
        guard !usable.isEmpty else { return }
        known.withLock { known in
            for secret in usable where !known.contains(where: { $0 == secret }) { known.append(secret) }
        }
    }

    /// Sends `request` through the wrapped transport; an answer that is not a success comes back with
    /// every known secret cut out.
    /// - Throws: what the wrapped transport throws.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        remember(request.bodySecrets + Self.headerSecrets(of: request))
        let response = try await wrapped.send(request)
        guard !response.isSuccess else { return response }
        return HTTPResponse(
            status: response.status,
            headers: response.headers.map { ($0.name, redact($0.value)) },
            body: redact(response.body)
        )
    }

    /// `text` with every known secret cut out.
    public func redact(_ text: String) -> String {
        String(decoding: redact(Array(text.utf8)), as: UTF8.self)
    }

    /// `bytes` with every known secret cut out.
    public func redact(_ bytes: [UInt8]) -> [UInt8] {
        let secrets = known.withLock { $0 }
        guard !secrets.isEmpty, !bytes.isEmpty else { return bytes }
        var output = bytes
        for secret in secrets {
            for form in Self.forms(of: secret) { output = Self.replacing(form, in: output) }
        }
        return output
    }

    /// The secrets of a request's credential headers.
    static func headerSecrets(of request: HTTPRequest) -> [Secret] {
        var secrets: [Secret] = []
        for (name, value) in request.headers where isCredentialHeader(name) {
            secrets.append(Secret(value))
            guard let space = value.firstIndex(of: " ") else { continue }
            let scheme = value[..<space].lowercased()
            let credential = value[value.index(after: space)...].trimmingCharacters(in: .whitespaces)
            secrets.append(Secret(credential))
            if scheme == "basic", let decoded = Data(base64Encoded: credential) {
                let pair = String(decoding: decoded, as: UTF8.self)
                secrets.append(Secret(pair))
                if let colon = pair.firstIndex(of: ":") {
                    secrets.append(Secret(String(pair[pair.index(after: colon)...])))
                }
            }
        }
        return secrets
    }

    static func isCredentialHeader(_ name: String) -> Bool {
        let name = name.lowercased()
        if ["authorization", "proxy-authorization", "cookie"].contains(name) { return true }
        return ["token", "secret", "password", "api-key", "apikey", "session"].contains { name.contains($0) }
    }

    /// A secret as sent: raw, percent-encoded (form bodies, URLs) and JSON-escaped, each once.
    private static func forms(of secret: Secret) -> [[UInt8]] {
        let raw = secret.withUnsafeBytes { Array($0) }
        var percent: [UInt8] = []
        var json: [UInt8] = []
        for byte in raw {
            if HTTPRequest.isUnreserved(byte) {
                percent.append(byte)
            } else {
                percent += Array(String(format: "%%%02X", byte).utf8)
            }
        }
        raw.withUnsafeBytes { JSONEscaping.appendEscaped($0, to: &json) }
        var forms = [raw]
        for form in [percent, json] where !forms.contains(form) { forms.append(form) }
        return forms
    }

    /// `haystack` with each occurrence of `needle` replaced by ``replacement``.
    private static func replacing(_ needle: [UInt8], in haystack: [UInt8]) -> [UInt8] {
        guard !needle.isEmpty, haystack.count >= needle.count else { return haystack }
        let replacement = Array(Self.replacement.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(haystack.count)
        var index = 0
        while index < haystack.count {
            if haystack[index] == needle[0], haystack.count - index >= needle.count,
                haystack[index..<(index + needle.count)].elementsEqual(needle)
            {
                output += replacement
                index += needle.count
            } else {
                output.append(haystack[index])
                index += 1
            }
        }
        return output
    }
}
