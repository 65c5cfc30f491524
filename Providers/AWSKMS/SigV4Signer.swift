internal import COpenSSL
public import CertificateProviders
public import Foundation
public import HTTPClient

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`) for requests signed in headers: the canonical
/// request, the string to sign, the signing key derived from the secret access key with OpenSSL's
/// HMAC-SHA256, and the `Authorization`, `X-Amz-Date` and `X-Amz-Security-Token` headers (and
/// `X-Amz-Content-Sha256` when ``signsContentSHA256`` is set), as AWS documents them and botocore's
/// `SigV4Auth` makes them.
///
/// Checked against AWS's published SigV4 test vectors and against botocore signing the same KMS
/// request (`Tests/AWSKMSProviderTests/SigV4SignerTests.swift`).
///
/// Scope: every header of the request is signed (callers add none that a proxy rewrites); the path
/// is used as given, segments URI-encoded but not normalized (`.`/`..` are not resolved: KMS
/// requests go to `/`); query parameters are sorted by name, then value, and encoded with the RFC
/// 3986 unreserved set.
public struct SigV4Signer: Sendable {
    /// The credentials requests are signed with.
    public struct Credentials: Sendable {
        /// The access key ID (`AKIA…`, `ASIA…` for temporary credentials); it is not a secret and
        /// goes in the `Authorization` header.
        public var accessKeyID: String
        /// The secret access key: only HMAC keys derived from it ever leave this value.
        public var secretAccessKey: Secret
        /// The session token of temporary credentials (sent as `X-Amz-Security-Token`), or nil.
        public var sessionToken: Secret?

        /// Creates credentials; see the properties.
        public init(accessKeyID: String, secretAccessKey: Secret, sessionToken: Secret? = nil) {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
        }
    }

    /// What signing one request made, step by step (tests compare each step with AWS's vectors).
    public struct Signature: Sendable {
        /// The canonical request.
        public var canonicalRequest: String
        /// The string to sign.
        public var stringToSign: String
        /// The hex HMAC-SHA256 signature.
        public var signature: String
        /// The headers to add to the request, in order: `X-Amz-Date`, then `X-Amz-Security-Token`
        /// and `X-Amz-Content-Sha256` when they apply, then `Authorization`.
        public var headers: [(name: String, value: String)]
    }

    /// The credentials.
    public let credentials: Credentials
    /// The region (`us-east-1`).
    public let region: String
    /// The service's signing name (`kms`).
    public let service: String
    /// Whether the body's SHA-256 is sent and signed as `X-Amz-Content-Sha256` (S3 does; KMS does
    /// not need it, so the default is false, as botocore does for KMS).
    public var signsContentSHA256: Bool

    /// Creates a signer; see the properties.
    public init(credentials: Credentials, region: String, service: String, signsContentSHA256: Bool = false) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.signsContentSHA256 = signsContentSHA256
    }

    /// Signs `request` at `date`: adds `X-Amz-Date`, `X-Amz-Security-Token` (temporary credentials),
    /// `X-Amz-Content-Sha256` (when ``signsContentSHA256``) and `Authorization`. Every header the
    /// request already has is signed, and `host` (from the URL, with the port when it has one).
    public func sign(_ request: inout HTTPRequest, at date: Date = Date()) {
        var headers = request.headers
        if request.header("Host") == nil { headers.insert(("Host", Self.hostHeader(of: request.url)), at: 0) }
        // A secret body is hashed in place, never copied.
        let payloadHash =
            request.secretBody.map { secret in secret.withUnsafeBytes { DigestAlgorithm.sha256.hash($0) } }
            ?? DigestAlgorithm.sha256.hash(request.body)
        let made = signature(
            method: request.method.rawValue,
            url: request.url,
            headers: headers,
            payloadHash: Self.hex(payloadHash),
            at: date
        )
        for (name, value) in made.headers { request.setHeader(name, value) }
    }

    /// The signature of a request given by its parts (the headers must include `Host`).
    /// - Parameters:
    ///   - method: the HTTP method (`POST`).
    ///   - url: the absolute URL (its path and query are signed).
    ///   - headers: the request's headers; all are signed.
    ///   - body: the body.
    ///   - date: the signing time (sent as `X-Amz-Date`).
    public func signature(
        method: String,
        url: URL,
        headers: [(name: String, value: String)],
        body: [UInt8],
        at date: Date
    ) -> Signature {
        signature(
            method: method,
            url: url,
            headers: headers,
            payloadHash: Self.hex(DigestAlgorithm.sha256.hash(body)),
            at: date
        )
    }

    /// The signature of a request whose body's SHA-256 is `payloadHash` (lower-case hex).
    private func signature(
        method: String,
        url: URL,
        headers: [(name: String, value: String)],
        payloadHash: String,
        at date: Date
    ) -> Signature {
        let amzDate = Self.amzDate(date)
        let scope = "\(amzDate.prefix(8))/\(region)/\(service)/aws4_request"
        var added: [(name: String, value: String)] = [("X-Amz-Date", amzDate)]
        if let token = credentials.sessionToken {
            added.append(("X-Amz-Security-Token", token.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }))
        }
        if signsContentSHA256 { added.append(("X-Amz-Content-Sha256", payloadHash)) }
        let canonical = Self.canonicalHeaders(headers + added)
        let canonicalRequest = [
            method, Self.canonicalPath(url), Self.canonicalQuery(url), canonical.block, canonical.names, payloadHash,
        ].joined(separator: "\n")
        let stringToSign = [
            "AWS4-HMAC-SHA256", amzDate, scope, Self.hex(DigestAlgorithm.sha256.hash(Array(canonicalRequest.utf8))),
        ].joined(separator: "\n")
        let signature = Self.hex(signingKey(day: String(amzDate.prefix(8))).mac(Array(stringToSign.utf8)))
        added.append(
            (
                "Authorization",
                "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(canonical.names), "
                    + "Signature=\(signature)"
            )
        )
        return Signature(
            canonicalRequest: canonicalRequest,
            stringToSign: stringToSign,
            signature: signature,
            headers: added
        )
    }

    // MARK: Steps

    /// `kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request")`.
    private func signingKey(day: String) -> HMACKey {
        var prefixed = Array("AWS4".utf8)
        credentials.secretAccessKey.withUnsafeBytes { prefixed.append(contentsOf: $0) }
        var key = HMACKey(Secret(wiping: &prefixed)).mac(Array(day.utf8))
        for part in [region, service, "aws4_request"] { key = HMACKey(key).mac(Array(part.utf8)) }
        return HMACKey(key)
    }

    /// The `YYYYMMDD'T'HHMMSS'Z'` form of `date` (UTC).
    static func amzDate(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return String(format: "%04d", parts.year ?? 0) + two(parts.month) + two(parts.day) + "T" + two(parts.hour)
            + two(parts.minute) + two(parts.second) + "Z"
    }

    /// `host` or `host:port` of `url`, as HTTP/1.1 sends it.
    static func hostHeader(of url: URL) -> String {
        let host = url.host ?? ""
        let bracketed = host.contains(":") ? "[\(host)]" : host
        guard let port = url.port else { return bracketed }
        let isDefault = (url.scheme == "https" && port == 443) || (url.scheme == "http" && port == 80)
        return isDefault ? bracketed : "\(bracketed):\(port)"
    }

    /// Lower-case names, values with surrounding space removed and inner runs of spaces made one,
    /// values of repeated names joined with commas in order, sorted by name.
    static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> (block: String, names: String) {
        var values: [String: [String]] = [:]
        for (name, value) in headers {
            let trimmed = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
            values[name.lowercased(), default: []].append(trimmed)
        }
        let names = values.keys.sorted()
        let block = names.map { "\($0):\(values[$0, default: []].joined(separator: ","))\n" }.joined()
        return (block, names.joined(separator: ";"))
    }

    /// The URI-encoded path (`/` when empty), each segment encoded, slashes kept.
    static func canonicalPath(_ url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.path ?? url.path
        guard !path.isEmpty else { return "/" }
        return path.split(separator: "/", omittingEmptySubsequences: false).map { uriEncode(String($0)) }
            .joined(separator: "/")
    }

    /// Query parameters decoded, encoded again with the unreserved set, sorted by name then value.
    static func canonicalQuery(_ url: URL) -> String {
        guard let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery,
            !query.isEmpty
        else { return "" }
        let pairs = query.split(separator: "&").map { item -> (String, String) in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring?) -> String {
                guard let text else { return "" }
                return String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            return (uriEncode(decoded(parts.first)), uriEncode(decoded(parts.count > 1 ? parts[1] : nil)))
        }
        return pairs.sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// Percent-encodes everything but `A–Z a–z 0–9 - . _ ~` (RFC 3986 unreserved), with upper-case hex.
    static func uriEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"
    )

    /// Lower-case hex.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var output = ""
        output.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return output
    }
}

/// An HMAC-SHA256 key; ``mac(_:)`` runs OpenSSL's `EVP_Q_mac`. The key bytes are wiped when the value
/// is released.
private struct HMACKey {
    private let key: Secret

    init(_ key: Secret) { self.key = key }

    init(_ bytes: [UInt8]) {
        var bytes = bytes
        key = Secret(wiping: &bytes)
    }

    /// HMAC-SHA256 of `data` under this key (32 bytes).
    func mac(_ data: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length = 0
        let made = key.withUnsafeBytes { key in
            data.withUnsafeBufferPointer { data in
                EVP_Q_mac(
                    nil,
                    "HMAC",
                    nil,
                    "SHA256",
                    nil,
                    key.baseAddress,
                    key.count,
                    data.baseAddress,
                    data.count,
                    &output,
                    output.count,
                    &length
                )
            }
        }
        // EVP_Q_mac fails only when OpenSSL has no HMAC or SHA-256 (a broken installation); an
        // empty MAC then makes every request fail AWS's signature check instead of crashing.
        guard made != nil, length == 32 else {
            ERR_clear_error()
            return []
        }
        return output
    }
}
