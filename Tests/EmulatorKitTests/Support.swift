import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import RemoteProviderSupport
import TestSupport
import Testing

/// A raw HTTP client for hostile requests: the package's transport, no FMP client in between.
struct RawClient {
    let base: URL
    let transport = CurlTransport()

    func send(
        _ method: HTTPMethod,
        _ path: String,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = []
    ) async throws -> HTTPResponse {
        let url = try #require(
            URL(string: base.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + path)
        )
        return try await transport.send(
            HTTPRequest(method: method, url: url, headers: headers, body: body, timeout: 10)
        )
    }

    func json(
        _ method: HTTPMethod,
        _ path: String,
        token: String?,
        device: String = "raw-device",
        _ json: String
    ) async throws -> HTTPResponse {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json"), ("X-Device-Id", device)]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return try await send(method, path, headers: headers, body: Array(json.utf8))
    }

    /// Logs in and returns the access token.
    func login(
        user: String = "Leonid",
        password: String = "123123",
        device: String = "raw-device"
    ) async throws -> String {
        let form = HTTPRequest.formEncoded([
            ("environment", "Leonid_environment"), ("project", "Leonid_project"), ("username", user),
            ("password", password), ("device_id", device),
        ])
        let response = try await send(
            .post,
            "/api/v1/auth/jwt/obtain/",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array(form.utf8)
        )
        #expect(response.status == 200)
        return try #require(try response.json(context: "login")["token"]?.stringValue)
    }
}

/// Starts an emulator on an ephemeral loopback port for the duration of `body`, with a raw client of it.
func withRawClient<R>(
    _ configuration: DSSEmulator.Configuration = .init(),
    _ body: (DSSEmulator, RawClient) async throws -> R
) async throws -> R {
    try await withEmulator(configuration) { emulator, url in try await body(emulator, RawClient(base: url)) }
}

let dss = "/api/v1/dss/Leonid_environment/Leonid_project"

/// Checks an FMP error envelope: status, `http.status` and the first error's code.
func expectEnvelope(
    _ response: HTTPResponse,
    _ status: Int,
    _ code: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(
        response.status == status,
        "HTTP \(response.status): \(String(decoding: response.body, as: UTF8.self))",
        sourceLocation: sourceLocation
    )
    let body = try? JSONValue(parsing: response.body)
    #expect(body?["status"] == "error", sourceLocation: sourceLocation)
    #expect(body?["http"]?["status"]?.intValue == status, sourceLocation: sourceLocation)
    #expect(
        body?["errors"]?.arrayValue?.first?["code"]?.stringValue == code,
        "\(String(describing: body))",
        sourceLocation: sourceLocation
    )
    #expect(
        body?["errors"]?.arrayValue?.first?["description"]?.stringValue?.isEmpty == false,
        sourceLocation: sourceLocation
    )
    #expect(response.header("Content-Type")?.hasPrefix("application/json") == true, sourceLocation: sourceLocation)
}

let signBody =
    #"{"resource":"GetBudgetPlanning","table":"ПланированиеБюджета","params":{},"column":"Номер","hhive_id":1,"password":"Saprun123","certificate_id":12831,"certificate_pin":"123"}"#

extension DSSEmulator {
    /// Logs in as the seed's Leonid through ``DSSEmulator/handle(method:path:headers:body:)`` (no
    /// socket) and returns the access token.
    func inProcessLogin(device: String) throws -> String {
        let form = HTTPRequest.formEncoded([
            ("environment", "Leonid_environment"), ("project", "Leonid_project"), ("username", "Leonid"),
            ("password", "123123"), ("device_id", device),
        ])
        let login = try #require(
            handle(
                method: "POST",
                path: "/api/v1/auth/jwt/obtain/",
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Array(form.utf8)
            )
        )
        #expect(login.status == 200)
        return try #require(try JSONValue(parsing: login.body)["token"]?.stringValue)
    }
}
