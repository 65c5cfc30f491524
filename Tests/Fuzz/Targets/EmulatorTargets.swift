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
        let form =
            "environment=\(StandardSeed.environment)&project=\(StandardSeed.project)&username=\(StandardSeed.username)"
            + "&password=\(StandardSeed.password)&device_id=fuzz"
        let fmp = emulator.handle(
            method: "POST",
            path: "/api/v1/auth/jwt/obtain/",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array(form.utf8)
        )
        let oauth =
            "grant_type=password&username=\(StandardSeed.username)&password=\(StandardSeed.password)"
            + "&client_id=\(CryptoProEmulatorClients.publicClientID)&resource=\(CryptoProEmulatorClients.resource)"
        let cryptoPro = emulator.handle(
            method: "POST",
            path: "/STS/oauth/token",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array(oauth.utf8)
        )
        guard let fmpToken = fmp.flatMap({ try? JSONValue(parsing: $0.body) })?["token"]?.stringValue,
            let cryptoProToken = cryptoPro.flatMap({ try? JSONValue(parsing: $0.body) })?["access_token"]?.stringValue
        else {
            return nil
        }
        return Fixture(emulator: emulator, fmpToken: fmpToken, cryptoProToken: cryptoProToken)
    }()

    static func fmp(_ input: [UInt8]) -> String {
        guard let fixture = fixture else { fatalError("certsign-fuzz: the emulator fixture could not be made") }
        return send(
            input,
            routes: fmpRoutes,
            to: fixture.emulator,
            headers: [("Authorization", "Bearer \(fixture.fmpToken)"), ("X-Device-Id", "fuzz")]
        )
    }

    static func cryptoPro(_ input: [UInt8]) -> String {
        guard let fixture = fixture else { fatalError("certsign-fuzz: the emulator fixture could not be made") }
        return send(
            input,
            routes: cryptoProRoutes,
            to: fixture.emulator,
            headers: [("Authorization", "Bearer \(fixture.cryptoProToken)")]
        )
    }

    private static func send(
        _ input: [UInt8],
        routes: [(method: String, path: String, contentType: String)],
        to emulator: DSSEmulator,
        headers: [(name: String, value: String)]
    ) -> String {
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
        let response = emulator.handle(
            method: route.method,
            path: route.path,
            headers: headers + [("Content-Type", route.contentType)],
            body: body
        )
        guard let response else { return "\(route.method) \(route.path): dropped" }
        let json = (try? JSONValue(parsing: response.body)).map { _ in "JSON" } ?? "not JSON"
        return "\(route.method) \(route.path): \(response.status), \(response.body.count) bytes of \(json)"
    }
}
