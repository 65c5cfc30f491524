import CertificateProviders
import Foundation
import HTTPClient
import JSON

/// `certsign emulator approve|decline ID --url URL` (and `certsign-emulator approve|decline …`): plays
/// the person who approves or declines a signing operation that waits on a running emulator (a CSC
/// asynchronous `signHash`), through the emulator's loopback admin route.
extension Commands {
    struct EmulatorDecisionOptions: CommandOptions {
        var operationID = ""
        var url: URL?

        static var arguments: [ArgumentBinding<Self>] {
            [.one(\.operationID, "ID", "the operation's ID (what 'certsign sign --no-wait' printed)")]
        }

        static var options: [OptionBinding<Self>] {
            [
                .value(
                    \.url,
                    "--url",
                    "URL",
                    "the running emulator's base URL (what it printed when it started)",
                    type: .url,
                    required: true
                ) { text in
                    guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil
                    else { throw InvalidValue(message: "--url \(text) is not an http(s) URL") }
                    return url
                }
            ]
        }
    }

    static let emulatorApprove = emulatorDecision(approve: true)
    static let emulatorDecline = emulatorDecision(approve: false)

    private static func emulatorDecision(approve: Bool) -> CommandDescriptor {
        let verb = approve ? "approve" : "decline"
        return CommandDescriptor(
            words: ["emulator", verb],
            summary: "\(verb) a signing operation that waits for a person on a running emulator",
            discussion: """
                Stands in for the person's phone: the operation (a CSC signHash with operationMode A, or a \
                CryptoPro DSS transaction) \
                becomes \(approve ? "approved, and the client's next poll gets its signatures" : "declined, and the client's next poll fails"). \
                The emulator serves this route on loopback addresses only. Exit 1 when the operation is \
                unknown or no longer pending (approved, declined or expired).
                """,
            examples: ["certsign emulator \(verb) op-1a2b3c4d5e6f7a8b --url http://127.0.0.1:8080/"]
        ) { (options: EmulatorDecisionOptions, context) in
            guard let base = options.url else { throw InvalidValue(message: "--url URL is required") }
            let document = try await EmulatorDecision.send(base: base, operationID: options.operationID, verb: verb)
            context.emit(encoding: document, human: "operation \(document.id) \(document.state)")
            return CertSign.exitSuccess
        }
    }
}

/// `emulator approve|decline --json`: `{"id", "state"}`.
struct EmulatorDecision: Encodable {
    var id: String
    var state: String

    enum CodingKeys: String, CodingKey, CaseIterable { case id, state }

    /// Posts the decision to `<base>emulator/approvals/<id>/<verb>`.
    /// - Throws: `.notStored` for an unknown operation, `.invalidParameter` for one no longer
    ///   pending, `.serverRejected` for any other refusal (each with the emulator's reason);
    ///   the transport's errors.
    static func send(base: URL, operationID: String, verb: String) async throws -> EmulatorDecision {
        guard !operationID.isEmpty, !operationID.contains("/"),
            let escaped = operationID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)
        else {
            throw InvalidValue(message: "operation ID '\(operationID)' is not an ID")
        }
        let url = base.appendingPathComponent("emulator/approvals/\(escaped)/\(verb)")
        let transport = try CurlTransport(configuration: .init())
        let response = try await transport.send(HTTPRequest(method: .post, url: url))
        let json = try? JSONValue(parsing: response.body)
        guard response.isSuccess else {
            let reason = json?["error_description"]?.stringValue ?? "HTTP \(response.status)"
            let code: CertificateProviderError.Code =
                switch response.status {
                case 404: .notStored
                case 409: .invalidParameter
                default: .serverRejected
                }
            throw CertificateProviderError(code, "the emulator at \(base.absoluteString) refused to \(verb): \(reason)")
        }
        return EmulatorDecision(
            id: json?["id"]?.stringValue ?? operationID,
            state: json?["state"]?.stringValue ?? (verb == "approve" ? "approved" : "declined")
        )
    }
}
