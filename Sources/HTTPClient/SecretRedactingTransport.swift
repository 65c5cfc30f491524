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
    private let known: Mutex<Known>

    /// The secrets it cuts out, and the credential header values whose secrets are among them.
    private struct Known {
        var secrets: [Secret] = []
        /// Values of credential headers already taken apart (``headerSecrets(value:)``): a
        /// client sends the same token with every request, and taking it apart again would find
        /// only secrets already known.
        var headerValues: [Secret] = []
    }

    /// Wraps `transport`.
    /// - Parameters:
    ///   - transport: the transport that sends the requests.
    ///   - secrets: secrets to cut out besides those the requests carry (nil entries are skipped).
    public init(_ transport: any HTTPTransport, secrets: [Secret?] = []) {
        wrapped = transport
        known = Mutex(Known())
        remember(secrets.compactMap { $0 })
    }

    /// Adds secrets to cut out of later answers.
    public func remember(_ secrets: [Secret]) {
        let usable = secrets.filter { $0.count >= Self.minimumLength }
        guard !usable.isEmpty else { return }
        known.withLock { known in
            for secret in usable where !known.secrets.contains(where: { $0 == secret }) { known.secrets.append(secret) }
        }
    }

    /// Sends `request` through the wrapped transport; an answer that is not a success comes back with
    /// every known secret cut out.
    /// - Throws: what the wrapped transport throws.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        remember(request.bodySecrets)
        for (name, value) in request.headers where Self.isCredentialHeader(name) {
            rememberSecrets(ofHeaderValue: value)
        }
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
        let secrets = known.withLock { $0.secrets }
        guard !secrets.isEmpty, !bytes.isEmpty else { return bytes }
        var output = bytes
        for secret in secrets {
            for form in Self.forms(of: secret) { output = Self.replacing(form, in: output) }
        }
        return output
    }

    /// Remembers the secrets of one credential header, unless its value was taken apart before.
    private func rememberSecrets(ofHeaderValue value: String) {
        var value = value
        let seen = value.withUTF8 { bytes in
            known.withLock { known in
                known.headerValues.contains { $0.withUnsafeBytes { $0.elementsEqual(UnsafeRawBufferPointer(bytes)) } }
            }
        }
        guard !seen else { return }
        remember(Self.headerSecrets(value: value))
        let whole = Secret(value)
        known.withLock { $0.headerValues.append(whole) }
    }

    /// The secrets of one credential header: its value, the credential after the scheme, and for
    /// `Basic` the decoded `id:secret` and its secret.
    static func headerSecrets(value: String) -> [Secret] {
        var secrets = [Secret(value)]
        guard let space = value.utf8.firstIndex(of: UInt8(ascii: " ")) else { return secrets }
        let scheme = String(value[..<space])
        let credential = trimmingWhitespace(value[value.utf8.index(after: space)...])
        secrets.append(Secret(credential))
        let isBasic =
            scheme.utf8.allSatisfy { $0 < 0x80 } ? headerNamesMatch(scheme, "basic") : scheme.lowercased() == "basic"
        if isBasic,
            let decoded = Data(base64Encoded: credential)
        {
            let pair = String(decoding: decoded, as: UTF8.self)
            secrets.append(Secret(pair))
            if let colon = pair.firstIndex(of: ":") {
                secrets.append(Secret(String(pair[pair.index(after: colon)...])))
            }
        }
        return secrets
    }

    /// `text` without leading and trailing white space (as `trimmingCharacters(in: .whitespaces)`,
    /// without going through `NSString` for ASCII text).
    private static func trimmingWhitespace(_ text: Substring) -> String {
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return text.trimmingCharacters(in: .whitespaces) }
        let utf8 = text.utf8
        guard let first = utf8.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }),
            let last = utf8.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })
        else { return "" }
        return String(text[first...last])
    }

    /// Whether a header carries a credential: `Authorization`, `Proxy-Authorization`, `Cookie`, or a
    /// name that mentions a token, a secret, a password, an API key or a session (any case).
    static func isCredentialHeader(_ name: String) -> Bool {
        // Names are ASCII tokens; another name is lowercased the Unicode way.
        guard name.utf8.allSatisfy({ $0 < 0x80 }) else {
            let lowered = name.lowercased()
            return credentialHeaderNames.contains(lowered) || credentialNameParts.contains { lowered.contains($0) }
        }
        if credentialHeaderNames.contains(where: { headerNamesMatch(name, $0) }) { return true }
        var bytes = name
        return bytes.withUTF8 { utf8 in credentialNamePartBytes.contains { containsIgnoringASCIICase(utf8, $0) } }
    }

    private static let credentialHeaderNames = ["authorization", "proxy-authorization", "cookie"]
    private static let credentialNameParts = ["token", "secret", "password", "api-key", "apikey", "session"]
    private static let credentialNamePartBytes = credentialNameParts.map { Array($0.utf8) }

    /// Whether ASCII `bytes` contain the lowercase ASCII `needle`, ignoring case.
    private static func containsIgnoringASCIICase(_ bytes: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        guard bytes.count >= needle.count else { return false }
        func lowered(_ byte: UInt8) -> UInt8 {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
        }
        for start in 0...(bytes.count - needle.count)
        where (0..<needle.count).allSatisfy({ lowered(bytes[start + $0]) == needle[$0] }) {
            return true
        }
        return false
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
