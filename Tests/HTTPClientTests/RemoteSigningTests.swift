import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import RemoteProviderSupport
import TestSupport
import Testing

private func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

@Suite("RemoteEndpointPolicy")
struct RemoteEndpointPolicyTests {
    @Test(
        "https anywhere; http only to loopback",
        arguments: [
            ("https://fmp.example.com/", true), ("http://127.0.0.1:8080/", true), ("http://127.1.2.3/", true),
            ("http://localhost/", true),
            ("http://LOCALHOST:1/", true), ("http://api.localhost/", true), ("http://[::1]:8080/", true),
            ("http://[0:0:0:0:0:0:0:1]/", true),
            ("http://[::ffff:127.0.0.1]/", true), ("http://fmp.example.com/", false), ("http://10.0.0.1/", false),
            ("http://128.0.0.1/", false),
            ("http://localhost.evil.com/", false), ("http://127.0.0.1.evil.com/", false), ("http://[::2]/", false),
            ("ftp://127.0.0.1/", false),
            ("file:///etc/passwd", false),
        ]
    )
    func defaults(address: String, allowed: Bool) throws {
        let target = try url(address)
        if allowed {
            try RemoteEndpointPolicy.default.validate(target)
        } else {
            #expect(throws: HTTPClientError.self) { try RemoteEndpointPolicy.default.validate(target) }
        }
    }

    @Test("allowsInsecureHTTP opens http:// to any host, never other schemes")
    func optIn() throws {
        let policy = RemoteEndpointPolicy(allowsInsecureHTTP: true)
        try policy.validate(try url("http://testmasterfmp.fsight.cloud/"))
        #expect(throws: HTTPClientError.self) { try policy.validate(try url("ftp://example.com/")) }
        let insecure = try url("http://testmasterfmp.fsight.cloud/")
        let error = try #require(throws: HTTPClientError.self) {
            try RemoteEndpointPolicy.default.validate(insecure)
        }
        #expect(error.code == .invalidParameter)
        #expect(error.reason.contains("--allow-insecure-http"))
    }
}

@Suite("JSONValue and JSONObjectReader")
struct JSONTests {
    @Test(
        "number kinds at the edges: Int range, fraction and exponent make a number; booleans stay booleans; fragments parse"
    )
    func numberEdges() throws {
        let value = try JSONValue(
            parsing:
                "[true, false, 0, 1, -5, 1.5, 1.0, 1e3, 12345678901234567890, 9223372036854775807, -9223372036854775808]"
        )
        #expect(
            value == [
                .bool(true), .bool(false), .integer(0), .integer(1), .integer(-5), .number(1.5), .number(1.0),
                .number(1000),
                .number(1.2345678901234567e19), .integer(Int.max), .integer(Int.min),
            ]
        )
        #expect(try JSONValue(parsing: "\"Номер\"") == .string("Номер"))
        #expect(try JSONValue(parsing: "null") == .null)
        #expect(try JSONValue(parsing: "7") == .integer(7))
        for bad in ["{\"a\" 1}", "tru", "[1] x", "\"\u{01}\"", "01"] {
            #expect(throws: JSONError.self, "\(bad)") { try JSONValue(parsing: bad) }
        }
    }

    @Test("parsing keeps integers, numbers, booleans and Unicode apart; printing sorts keys")
    func parsing() throws {
        let value = try JSONValue(parsing: #"{"b": true, "a": 1, "c": 1.5, "d": "Номер", "e": null, "f": [0, false]}"#)
        #expect(value["a"] == .integer(1))
        #expect(value["b"] == .bool(true))
        #expect(value["c"] == .number(1.5))
        #expect(value["d"]?.stringValue == "Номер")
        #expect(value["e"]?.isNull == true)
        #expect(value["f"] == [0, false])
        #expect(value.description == #"{"a":1,"b":true,"c":1.5,"d":"Номер","e":null,"f":[0,false]}"#)
        #expect(try JSONValue(parsing: value.jsonBytes()) == value)
        #expect(throws: JSONError.self) { try JSONValue(parsing: "{\"a\": ") }
        #expect(throws: JSONError.self) { try JSONValue(parsing: [UInt8]()) }
    }

    @Test("a server answer's reader names the missing or mistyped field with its path, with the code it was given")
    func reader() throws {
        let value = try JSONValue(parsing: #"{"certificates": [{"id": 1}, {"id": "2"}], "flag": 1, "blob": "@@@"}"#)
        let reader = try JSONObjectReader(value, context: "FMP certificates", errorCode: .network)
        let entries = try reader.objects("certificates")
        #expect(try entries[0].int("id") == 1)
        let mistyped = try #require(throws: CertificateProviderError.self) { try entries[1].int("id") }
        #expect(mistyped.code == .network)
        #expect(mistyped.reason == "FMP certificates: field 'certificates[1].id' must be an integer, found string")
        let missing = try #require(throws: CertificateProviderError.self) { try reader.string("missing") }
        #expect(missing.reason == "FMP certificates: field 'missing' is missing")
        #expect(throws: CertificateProviderError.self) { try reader.bool("flag") }
        #expect(throws: CertificateProviderError.self) { try reader.base64("blob") }
        let notObject = try #require(throws: CertificateProviderError.self) {
            try JSONObjectReader([1, 2], context: "request", errorCode: .malformedInput)
        }
        #expect(notObject.code == .malformedInput)
        #expect(notObject.reason == "request: the JSON body must be an object, found array")
    }

    @Test("form encoding escapes reserved characters and UTF-8")
    func form() {
        #expect(
            HTTPRequest.formEncoded([("user name", "Лёня"), ("p", "a&b=c+d/é~")])
                == "user%20name=%D0%9B%D1%91%D0%BD%D1%8F&p=a%26b%3Dc%2Bd%2F%C3%A9~"
        )
    }
}

/// The transport the package ships (libcurl), with a response limit.
func makeTransport(maximumResponseBodyBytes: Int = 16 << 20) throws -> CurlTransport {
    try CurlTransport(configuration: .init(maximumResponseBodyBytes: maximumResponseBodyBytes))
}

@Suite("CurlTransport and RetryPolicy over real loopback HTTP")
struct TransportTests {
    private func withFaultyEmulator<R>(_ body: (DSSEmulator, URL) async throws -> R) async throws -> R {
        let emulator = try DSSEmulator(configuration: .init(faultsEnabled: true), seed: sharedSeed)
        let base = try emulator.start()
        defer { emulator.stop() }
        return try await body(emulator, base)
    }

    private func request(
        _ base: URL,
        _ method: HTTPMethod = .get,
        fault: String? = nil,
        timeout: TimeInterval = 10
    ) throws -> HTTPRequest {
        var request = HTTPRequest(
            method: method,
            url: try url(base.absoluteString + "api/v1/nothing/"),
            timeout: timeout
        )
        if let fault { request.setHeader(DSSEmulator.Fault.headerName, fault) }
        return request
    }

    @Test("any status is a response, with headers and body")
    func statusIsResponse() async throws {
        try await withFaultyEmulator { _, base in
            let response = try await makeTransport().send(try request(base, .post))
            #expect(response.status == 404)
            #expect(response.header("content-type")?.hasPrefix("application/json") == true)
            #expect(try response.json(context: "test")["errors"]?.arrayValue?.first?["code"] == "not_found")
            let failed = try await makeTransport().send(try request(base, fault: "status-500"))
            #expect(failed.status == 500)
        }
    }

    @Test(
        "a delayed answer → .timeout after the request's timeout, not after the delay"
    )
    func timeout() async throws {
        try await withFaultyEmulator { _, base in
            // The answer comes after 3 s and would be a success: getting `.timeout` proves the 0.25 s
            // deadline fired first. (No wall-clock assertion: other tests may keep the cooperative pool
            // busy, which delays when this task resumes, not when the deadline fires.)
            let error = await expectError(.timeout, as: HTTPClientError.self) {
                try await makeTransport().send(try request(base, fault: "delay=3000", timeout: 0.25))
            }
            #expect(error?.reason.contains("0.25") == true)
        }
    }

    @Test("a dropped connection and a refused connection → .network")
    func network() async throws {
        let base = try await withFaultyEmulator { _, base in
            await expectError(.network, as: HTTPClientError.self) {
                try await makeTransport().send(try request(base, fault: "drop"))
            }
            return base
        }
        await expectError(.network, as: HTTPClientError.self) { try await makeTransport().send(try request(base)) }
    }

    @Test(
        "a 20 MiB answer → .responseTooLarge (default limit 16 MiB); a configured limit holds to the byte"
    )
    func responseLimit() async throws {
        try await withFaultyEmulator { (_: DSSEmulator, base: URL) async throws -> Void in
            let error = await expectError(.responseTooLarge, as: HTTPClientError.self) {
                try await makeTransport().send(try request(base, fault: "large-body=\(20 << 20)"))
            }
            #expect(error?.reason.contains("\(16 << 20) bytes") == true)
            let small = try makeTransport(maximumResponseBodyBytes: 4096)
            #expect(try await small.send(try request(base, fault: "large-body=4096")).body.count == 4096)
            await expectError(.responseTooLarge, as: HTTPClientError.self) {
                try await small.send(try request(base, fault: "large-body=4097"))
            }
            // The transport is still usable afterwards.
            #expect(try await small.send(try request(base)).status == 404)
        }
    }

    @Test("http:// to a remote host is refused before anything is sent; an unreadable or empty CA file is refused")
    func refusals() async throws {
        await expectError(.invalidParameter, as: HTTPClientError.self) {
            try await makeTransport().send(HTTPRequest(url: try url("http://testmasterfmp.fsight.cloud/api/v1/")))
        }
        let directory = try TemporaryDirectory()
        expectError(.fileSystem, as: HTTPClientError.self) {
            try CurlTransport(configuration: .init(trustedCAFile: directory.path("missing.pem")))
        }
        let empty = try directory.write("empty.pem", text: "no certificate here\n")
        expectError(.malformedInput, as: HTTPClientError.self) {
            try CurlTransport(configuration: .init(trustedCAFile: empty))
        }
    }

    @Test(
        "https:// to a server that does not speak TLS → a TLS error (TLS is attempted and verified, never downgraded)"
    )
    func tlsFailure() async throws {
        try await withFaultyEmulator { emulator, base in
            let port = try #require(base.port)
            await expectError(.tls, as: HTTPClientError.self) {
                try await makeTransport().send(
                    HTTPRequest(url: try url("https://127.0.0.1:\(port)/api/v1/"), timeout: 5)
                )
            }
            #expect(emulator.receivedRequests.isEmpty)
        }
    }

    @Test("a cancelled task → .cancelled")
    func cancellation() async throws {
        try await withFaultyEmulator { _, base in
            let task = Task { try await makeTransport().send(try request(base, fault: "delay=3000")) }
            try await Task.sleep(nanoseconds: 100_000_000)
            task.cancel()
            await expectError(.cancelled, as: HTTPClientError.self) { try await task.value }
        }
    }

    @Test(
        "GET is retried on dropped connections with backoff; POST is sent exactly once"
    )
    func retry() async throws {
        try await withFaultyEmulator { (emulator: DSSEmulator, base: URL) async throws -> Void in
            let policy = RetryPolicy(maxAttempts: 3, initialBackoff: 0.01, backoffMultiplier: 2)
            await expectError(.network, as: HTTPClientError.self) {
                try await policy.send(try request(base, fault: "drop"), over: makeTransport())
            }
            #expect(emulator.receivedRequests.map(\.method) == ["GET", "GET", "GET"])
            emulator.clearReceivedRequests()
            await expectError(.network, as: HTTPClientError.self) {
                try await policy.send(try request(base, .post, fault: "drop"), over: makeTransport())
            }
            await expectError(.network, as: HTTPClientError.self) {
                try await policy.send(try request(base, .delete, fault: "drop"), over: makeTransport())
            }
            #expect(emulator.receivedRequests.map(\.method) == ["POST", "DELETE"])
            emulator.clearReceivedRequests()
            // A 500 is an answer, not a transient failure: returned at once.
            let answered = try await policy.send(try request(base, fault: "status-500"), over: makeTransport())
            #expect(answered.status == 500)
            #expect(emulator.receivedRequests.count == 1)
            emulator.clearReceivedRequests()
            await expectError(.timeout, as: HTTPClientError.self) {
                try await policy.send(try request(base, fault: "delay=2000", timeout: 0.2), over: makeTransport())
            }
            // The client may give up before a busy server has even logged the request (on a loaded
            // machine, before the request left at all): wait for it, then check that no second
            // attempt follows (a timeout is not retried).
            for _ in 0..<100 where emulator.receivedRequests.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            try await Task.sleep(for: .milliseconds(300))
            #expect(emulator.receivedRequests.count <= 1)
        }
        let policy = RetryPolicy(maxAttempts: 5, initialBackoff: 0.1, backoffMultiplier: 2, maxBackoff: 0.3)
        #expect(policy.backoff(beforeAttempt: 1) == 0)
        #expect(policy.backoff(beforeAttempt: 2) == 0.1)
        #expect(policy.backoff(beforeAttempt: 3) == 0.2)
        #expect(policy.backoff(beforeAttempt: 4) == 0.3)
        #expect(RetryPolicy.never.maxAttempts == 1)
    }
}
