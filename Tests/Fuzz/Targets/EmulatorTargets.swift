import CertificateProviders
import EmulatorKit
import Foundation
import HTTPClient
import JSON

/// The DSS emulator's request handling, in-process (``DSSEmulator/handle(method:path:headers:body:)``,
/// no socket), with the standard seed and a valid token for each API.
///
/// Input layout: byte 0 picks the route (see ``fmpRoutes`` / ``cryptoProRoutes``); the rest is the
/// request body. Route 0 reads the request line from the input instead: `METHOD /path\n` then the body.
enum EmulatorTargets {
    struct Fixture: Sendable {
        let emulator: DSSEmulator
        let fmpToken: String
        let cryptoProToken: String
    }

    static let dss = "/api/v1/dss/\(StandardSeed.environment)/\(StandardSeed.project)"
    static let fmpRoutes: [(method: String, path: String, contentType: String)] = [
        ("", "", "application/json"),
        ("POST", "/api/v1/auth/jwt/obtain/", "application/x-www-form-urlencoded"),
        ("POST", "/api/v1/auth/jwt/refresh/", "application/json"),
        ("POST", "\(dss)/certificates/", "application/json"),
        ("POST", "\(dss)/sign/", "application/json"),
        ("GET", "\(dss)/signs/", "application/json"),
    ]
    static let cryptoProRoutes: [(method: String, path: String, contentType: String)] = [
        ("", "", "application/json"),
        ("POST", "/STS/oauth/token", "application/x-www-form-urlencoded"),
        ("GET", "/SignServer/rest/api/certificates", "application/json"),
        ("POST", "/SignServer/rest/api/documents", "application/json"),
    ]

    /// The emulator and its tokens, made once per process (before the first input).
    static let fixture: Fixture? = {
        // No request log (it would grow with every input); tokens outlive any fuzz run.
        let configuration = DSSEmulator.Configuration(accessTokenLifetime: 30 * 86_400, requestLogLimit: 0)
        guard let emulator = try? DSSEmulator(configuration: configuration) else { return nil }
        /// POSTs the URL-encoded `form` to `path`: the string `field` of the JSON answer.
        func token(_ path: String, form: String, field: String) -> String? {
            let response = emulator.handle(
                method: "POST",
                path: path,
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Array(form.utf8)
            )
            return response.flatMap({ try? JSONValue(parsing: $0.body) })?[field]?.stringValue
        }
        let form =
            "environment=\(StandardSeed.environment)&project=\(StandardSeed.project)&username=\(StandardSeed.username)"
            + "&password=\(StandardSeed.password)&device_id=fuzz"
        let oauth =
            "grant_type=password&username=\(StandardSeed.username)&password=\(StandardSeed.password)"
            + "&client_id=\(CryptoProEmulatorClients.publicClientID)&resource=\(CryptoProEmulatorClients.resource)"
        guard let fmpToken = token("/api/v1/auth/jwt/obtain/", form: form, field: "token"),
            let cryptoProToken = token("/STS/oauth/token", form: oauth, field: "access_token")
        else {
            return nil
        }
        return Fixture(emulator: emulator, fmpToken: fmpToken, cryptoProToken: cryptoProToken)
    }()

    static func fmp(_ input: [UInt8]) -> String {
        send(input, routes: fmpRoutes) { [("Authorization", "Bearer \($0.fmpToken)"), ("X-Device-Id", "fuzz")] }
    }

    static func cryptoPro(_ input: [UInt8]) -> String {
        send(input, routes: cryptoProRoutes) { [("Authorization", "Bearer \($0.cryptoProToken)")] }
    }

    /// Sends `input` to the fixture's emulator: its first byte picks one of `routes`, the rest is the
    /// body (for a route without a method, a request line first); `headers` are the fixture's credentials.
    private static func send(
        _ input: [UInt8],
        routes: [(method: String, path: String, contentType: String)],
        headers: (Fixture) -> [(name: String, value: String)]
    ) -> String {
        guard let fixture = fixture else { fatalError("certsign-fuzz: the emulator fixture could not be made") }
        guard let first = input.first else { return "empty input" }
        var route = routes[Int(first) % routes.count]
        var body = Array(input.dropFirst())
        if route.method.isEmpty {
            let line = body.prefix { $0 != UInt8(ascii: "\n") }
            body = Array(body.dropFirst(line.count + 1))
            let words = String(decoding: line, as: UTF8.self).split(separator: " ", maxSplits: 1)
            guard words.count == 2 else { return "no request line" }
            route.method = String(words[0])
            route.path = String(words[1])
        }
        let response = fixture.emulator.handle(
            method: route.method,
            path: route.path,
            headers: headers(fixture) + [("Content-Type", route.contentType)],
            body: body
        )
        guard let response else { return "\(route.method) \(route.path): dropped" }
        let json = (try? JSONValue(parsing: response.body)).map { _ in "JSON" } ?? "not JSON"
        return "\(route.method) \(route.path): \(response.status), \(response.body.count) bytes of \(json)"
    }
}
