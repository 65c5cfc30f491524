import Foundation
public import HTTPClient
public import JSON

/// The platform's answer to every call, as the HHFW framework hands it to apps:
/// `{"status": "ok"|"error", "http": {"status": N}, "errors": [{"code", "description"}], "result": {"raw": <server JSON>}}`.
public struct FMPEnvelope: Sendable, Equatable, Codable {
    /// The HTTP part.
    public struct HTTP: Sendable, Equatable, Codable {
        /// The HTTP status code the server answered.
        public var status: Int
        /// Creates the HTTP part.
        public init(status: Int) { self.status = status }
    }

    /// One error the server reported.
    public struct ErrorEntry: Sendable, Equatable, Codable {
        /// The machine-readable code (`wrong_pin`).
        public var code: String
        /// The human description.
        public var description: String
        /// Creates an error entry.
        public init(code: String, description: String) {
            self.code = code
            self.description = description
        }
    }

    /// The result part.
    public struct ResultPart: Sendable, Equatable, Codable {
        /// The server's JSON as it came (tokens redacted for auth calls).
        public var raw: JSONValue
        /// Creates the result part.
        public init(raw: JSONValue) { self.raw = raw }
    }

    /// `ok` or `error`.
    public var status: String
    /// The HTTP status.
    public var http: HTTP
    /// The errors, empty on success.
    public var errors: [ErrorEntry]
    /// The server JSON.
    public var result: ResultPart

    /// Creates an envelope.
    public init(status: String, http: HTTP, errors: [ErrorEntry] = [], result: ResultPart) {
        self.status = status
        self.http = http
        self.errors = errors
        self.result = result
    }

    /// Whether ``status`` is `ok`.
    public var isOK: Bool { status == "ok" }

    /// The envelope as a JSON value (what the seed app receives as its dictionary).
    public var jsonValue: JSONValue {
        [
            "status": .string(status),
            "http": ["status": .integer(http.status)],
            "errors": .array(errors.map { ["code": .string($0.code), "description": .string($0.description)] }),
            "result": ["raw": result.raw],
        ]
    }

    /// The envelope as pretty-printed JSON text with sorted keys.
    public var jsonString: String {
        (try? jsonValue.jsonBytes(prettyPrinted: true)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// Builds the envelope for an HTTP answer: `ok` with the body as `raw` for 2xx; otherwise
    /// `error` with the server's `errors` (from an error envelope body) or one entry naming the status.
    public init(response: HTTPResponse, raw: JSONValue?) {
        let success = response.isSuccess
        var errors: [ErrorEntry] = []
        if !success {
            if let list = raw?["errors"]?.arrayValue {
                errors = list.compactMap { entry in
                    guard let code = entry["code"]?.stringValue ?? entry["code"].map({ $0.description }) else {
                        return nil
                    }
                    return ErrorEntry(code: code, description: entry["description"]?.stringValue ?? "")
                }
            }
            if errors.isEmpty {
                errors = [
                    ErrorEntry(
                        code: "http_\(response.status)",
                        description: raw?["message"]?.stringValue ?? "the server answered HTTP \(response.status)"
                    )
                ]
            }
        }
        self.init(
            status: success ? "ok" : "error",
            http: HTTP(status: response.status),
            errors: errors,
            result: ResultPart(raw: raw ?? .null)
        )
    }
}

/// A typed value together with the platform envelope it came in.
public struct FMPResult<Value: Sendable>: Sendable {
    /// The typed value.
    public let value: Value
    /// The platform envelope (`status`, `http.status`, `errors`, `result.raw`).
    public let envelope: FMPEnvelope

    /// Creates a result.
    public init(value: Value, envelope: FMPEnvelope) {
        self.value = value
        self.envelope = envelope
    }
}
