internal import CertificateProviders
internal import Foundation
internal import HTTPClient
internal import JSON

/// An AWS KMS error answer: the AWS error code and message, from a JSON body (`__type`,
/// `message`, as KMS sends) or an XML `ErrorResponse` (`Code`, `Message`, as moto sends for
/// authentication errors with HTTP 403).
struct AWSKMSServiceError {
    /// The HTTP status.
    let status: Int
    /// The action that failed (`Sign`).
    let action: String
    /// The AWS error code without its namespace (`NotFoundException`), or empty when none was sent.
    let code: String
    /// AWS's message, without any secret, at most 300 characters.
    let message: String

    /// Reads an error answer; `redacting` texts are replaced by `[redacted]` in the message.
    init(response: HTTPResponse, action: String, redacting secrets: [String]) {
        status = response.status
        self.action = action
        var code = ""
        var message = ""
        if let json = try? JSONValue(parsing: response.body), let object = json.objectValue {
            let type = object["__type"]?.stringValue ?? object["code"]?.stringValue ?? ""
            code = String(type.split(separator: "#").last ?? "").split(separator: ":").first.map(String.init) ?? ""
            message = (object["message"] ?? object["Message"])?.stringValue ?? ""
        } else {
            let text = String(decoding: response.body.prefix(8192), as: UTF8.self)
            code = Self.element("Code", in: text) ?? response.header("x-amzn-ErrorType") ?? ""
            message = Self.element("Message", in: text) ?? ""
        }
        for secret in secrets { message = message.replacingOccurrences(of: secret, with: "[redacted]") }
        while message.hasSuffix(".") || message.hasSuffix(" ") { message.removeLast() }
        self.code = code
        self.message = message.count > 300 ? String(message.prefix(300)) + "…" : message
    }

    /// Whether a later attempt may succeed: 429, 5xx, or a throttling code.
    var isRetryable: Bool {
        status == 429 || (500..<600).contains(status) || Self.throttlingCodes.contains(code)
    }

    private static let throttlingCodes: Set<String> = [
        "ThrottlingException", "ThrottledException", "TooManyRequestsException", "RequestLimitExceeded",
    ]
    private static let authenticationCodes: Set<String> = [
        "UnrecognizedClientException", "InvalidClientTokenId", "InvalidSignatureException", "SignatureDoesNotMatch",
        "IncompleteSignature", "AccessDeniedException", "AccessDenied", "ExpiredTokenException", "ExpiredToken",
        "MissingAuthenticationToken", "MissingAuthenticationTokenException", "AuthFailure",
    ]
    private static let unknownKeyCodes: Set<String> = ["NotFoundException", "InvalidArnException"]
    private static let unusableKeyCodes: Set<String> = [
        "InvalidKeyUsageException", "DisabledException", "KMSInvalidStateException", "KeyUnavailableException",
    ]

    /// The error a caller gets after `attempts` attempts.
    func providerError(attempts: Int) -> CertificateProviderError {
        let said = code.isEmpty ? "HTTP \(status)" : "\(code) (HTTP \(status))"
        let detail = message.isEmpty ? "" : ": \(message)"
        let tried = attempts > 1 ? " after \(attempts) attempts" : ""
        let base = "AWS KMS \(action) answered \(said)\(detail)\(tried)"
        if Self.authenticationCodes.contains(code) || (status == 403 && code.isEmpty) {
            return CertificateProviderError(
                .authenticationFailed,
                base + "; check the access key ID, the secret access key, the session token and the region"
            )
        }
        if Self.unknownKeyCodes.contains(code) {
            return CertificateProviderError.invalidParameter(
                base + "; check parameter 'keyID' (a key ID, key ARN or alias/NAME) and the region"
            )
        }
        if Self.unusableKeyCodes.contains(code) {
            return CertificateProviderError.unsupportedOperation(base)
        }
        if (500..<600).contains(status) { return CertificateProviderError(.network, base) }
        return CertificateProviderError(.serverRejected, base)
    }

    /// The text of the first `<name>…</name>` element of an XML document, or nil.
    private static func element(_ name: String, in text: String) -> String? {
        guard let open = text.range(of: "<\(name)>"),
            let close = text.range(of: "</\(name)>", range: open.upperBound..<text.endIndex)
        else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }
}
