import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import RemoteProviderSupport
import TestSupport
import Testing

@Suite("DSSEmulator: lifecycle, signing, hostile requests")
struct DSSEmulatorTests {
    @Test("start binds 127.0.0.1 on an ephemeral port read back from libmicrohttpd; stop closes it")
    func lifecycle() async throws {
        let first = try DSSEmulator(seed: sharedSeed)
        let second = try DSSEmulator(seed: sharedSeed)
        let firstURL = try first.start()
        let secondURL = try second.start()
        #expect(firstURL.host == "127.0.0.1")
        #expect((firstURL.port ?? 0) > 0)
        #expect(firstURL.port != secondURL.port)
        #expect(first.baseURL == firstURL)
        #expect(throws: CertificateProviderError.self) { try first.start() }
        second.stop()
        second.stop()
        #expect(second.baseURL == nil)
        let client = RawClient(base: secondURL)
        do {
            _ = try await client.send(.get, "/api/v1/")
            Issue.record("a stopped emulator answered")
        } catch let error as HTTPClientError {
            #expect(error.code == .network)
        }
        let alive = try await RawClient(base: firstURL).send(.get, "/nowhere")
        expectEnvelope(alive, 404, "not_found")
        first.stop()
        let bound = try DSSEmulator(configuration: .init(host: "::1"), seed: sharedSeed)
        let v6 = try bound.start()
        #expect(v6.absoluteString.hasPrefix("http://[::1]:"))
        // FoundationNetworking on Linux rejects IPv6 literal URLs (URL error -1000), so ask curl.
        if ExternalTool.isAvailable("curl") {
            let answer = try ExternalTool.run(
                "curl",
                ["-s", "-g", "-o", "/dev/null", "-w", "%{http_code}", v6.absoluteString + "x"]
            )
            #expect(answer.output == "404")
        }
        bound.stop()
        #expect(throws: CertificateProviderError.self) {
            try DSSEmulator(configuration: .init(host: "not-an-ip"), seed: sharedSeed).start()
        }
    }

    @Test(
        "a sign makes an attached CAdES-BES of the cell value that openssl cms -verify -cades accepts against the emulator's CA"
    )
    func signatureVerifies() async throws {
        try await withRawClient { emulator, client in
            let token = try await client.login()
            let response = try await client.json(.post, "\(dss)/sign/", token: token, signBody)
            #expect(response.status == 200)
            #expect(try response.json(context: "sign") == ["signature_id": 121])
            let second = try await client.json(.post, "\(dss)/sign/", token: token, signBody)
            #expect(try second.json(context: "sign") == ["signature_id": 122])
            let list = try await client.json(.get, "\(dss)/signs/", token: token, "")
            let entry = try #require(try list.json(context: "signs")["signs"]?.arrayValue?.first)
            let base64 = try #require(entry["signature"]?.stringValue)
            let cms = try #require(Data(base64Encoded: base64))

            let directory = try TemporaryDirectory()
            let signature = try directory.write("s.der", cms)
            let ca = try directory.write("ca.pem", text: emulator.certificateAuthorityPEM)
            let verify = try ExternalTool.run(
                "openssl",
                [
                    "cms", "-verify", "-binary", "-cades", "-inform", "DER", "-in", signature,
                    "-CAfile", ca, "-purpose", "any", "-out", directory.path("out"),
                ]
            )
            #expect(verify.succeeded, "\(verify.errorOutput)")
            #expect(String(decoding: try directory.read("out"), as: UTF8.self) == "БП-2026-001")
            let printed = try ExternalTool.run(
                "openssl",
                ["cms", "-cmsout", "-print", "-inform", "DER", "-in", signature]
            )
            #expect(printed.output.contains("id-smime-aa-signingCertificateV2"))
        }
    }

    @Test("routing: unknown route 404, wrong method 405 with Allow, wrong API version 404")
    func routing() async throws {
        try await withRawClient { _, client in
            expectEnvelope(try await client.send(.get, "/"), 404, "not_found")
            expectEnvelope(try await client.send(.get, "/api/v1/nothing/here/"), 404, "not_found")
            expectEnvelope(try await client.send(.post, "/api/v2/auth/jwt/obtain/"), 404, "not_found")
            let wrongMethod = try await client.send(.get, "/api/v1/auth/jwt/obtain/")
            expectEnvelope(wrongMethod, 405, "method_not_allowed")
            #expect(wrongMethod.header("Allow") == "POST")
            expectEnvelope(try await client.send(.post, "\(dss)/signs/"), 405, "method_not_allowed")
            expectEnvelope(try await client.send(.put, "\(dss)/signs/121/"), 405, "method_not_allowed")
        }
    }

    @Test("authorization: missing, malformed, unknown token and another device → 401; another environment → 404")
    func authorization() async throws {
        try await withRawClient { _, client in
            expectEnvelope(try await client.json(.get, "\(dss)/signs/", token: nil, ""), 401, "unauthorized")
            expectEnvelope(
                try await client.send(.get, "\(dss)/signs/", headers: [("Authorization", "Basic abc")]),
                401,
                "unauthorized"
            )
            expectEnvelope(try await client.json(.get, "\(dss)/signs/", token: "forged", ""), 401, "unauthorized")
            let token = try await client.login()
            expectEnvelope(
                try await client.json(.get, "\(dss)/signs/", token: token, device: "other-device", ""),
                401,
                "device_mismatch"
            )
            expectEnvelope(
                try await client.json(.get, "/api/v1/dss/Other_environment/Leonid_project/signs/", token: token, ""),
                404,
                "not_found"
            )
            let badLogin = try await client.send(
                .post,
                "/api/v1/auth/jwt/obtain/",
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Array(
                    "environment=Leonid_environment&project=Leonid_project&username=Leonid&password=x&device_id=d".utf8
                )
            )
            expectEnvelope(badLogin, 401, "invalid_credentials")
            let missing = try await client.send(.post, "/api/v1/auth/jwt/obtain/", body: Array("username=Leonid".utf8))
            expectEnvelope(missing, 400, "missing_field")
            expectEnvelope(
                try await client.json(.post, "/api/v1/auth/jwt/refresh/", token: nil, #"{"refresh_token":"nope"}"#),
                401,
                "invalid_refresh_token"
            )
            expectEnvelope(
                try await client.json(.post, "/api/v1/auth/jwt/refresh/", token: nil, #"{"refresh_token":42}"#),
                400,
                "invalid_field"
            )
        }
    }

    @Test("bodies: bad JSON, not an object, missing field, wrong types → 400 naming the field; oversized → 413")
    func badBodies() async throws {
        try await withRawClient(.init(maxBodyBytes: 4096)) { emulator, client in
            let token = try await client.login()
            let malformed: [(path: String, body: String, code: String)] = [
                ("\(dss)/sign/", "{\"resource\": ", "bad_json"),
                ("\(dss)/sign/", "[1,2,3]", "invalid_field"),
                ("\(dss)/certificates/", "{}", "missing_field"),
            ]
            for request in malformed {
                let response = try await client.json(.post, request.path, token: token, request.body)
                expectEnvelope(response, 400, request.code)
            }
            /// Posts the sign body with `original` replaced by `replacement`.
            func sign(replacing original: String, with replacement: String) async throws -> HTTPResponse {
                try await client.json(
                    .post,
                    "\(dss)/sign/",
                    token: token,
                    signBody.replacingOccurrences(of: original, with: replacement)
                )
            }
            let wrongType = try await sign(replacing: "\"hhive_id\":1", with: "\"hhive_id\":\"one\"")
            expectEnvelope(wrongType, 400, "invalid_field")
            #expect(String(decoding: wrongType.body, as: UTF8.self).contains("hhive_id"))
            let pinType = try await sign(replacing: "\"certificate_pin\":\"123\"", with: "\"certificate_pin\":123")
            expectEnvelope(pinType, 400, "invalid_field")
            for bad in ["\"params\":\"not json\"", "\"params\":\"[1]\"", "\"params\":5", "\"params\":[]"] {
                let params = try await sign(replacing: "\"params\":{}", with: bad)
                expectEnvelope(params, 400, "invalid_field")
                #expect(String(decoding: params.body, as: UTF8.self).contains("params"), "\(bad)")
            }
            let huge = "{\"password\": \"" + String(repeating: "A", count: 64 * 1024) + "\"}"
            expectEnvelope(
                try await client.json(.post, "\(dss)/certificates/", token: token, huge),
                413,
                "payload_too_large"
            )
            let bigger = [UInt8](repeating: 0x41, count: 3 << 20)
            expectEnvelope(
                try await client.send(.post, "/api/v1/auth/jwt/obtain/", body: bigger),
                413,
                "payload_too_large"
            )
            expectEnvelope(
                try await client.send(.post, "/api/v1/auth/jwt/obtain/", body: [0xFF, 0xFE, 0x3D]),
                400,
                "bad_form"
            )
            // Headers beyond the connection memory limit: libmicrohttpd refuses them itself (431) or closes.
            do {
                let huge = try await client.send(
                    .get,
                    "\(dss)/signs/",
                    headers: [("X-Padding", String(repeating: "p", count: 96 * 1024))]
                )
                #expect(huge.status == 431 || huge.status == 413 || huge.status == 400, "HTTP \(huge.status)")
            } catch let error as HTTPClientError {
                #expect(error.code == .network)
            }
            #expect(emulator.storedSignatureIDs.isEmpty)
            // The server still works after all that.
            #expect(try await client.json(.get, "\(dss)/signs/", token: token, "").status == 200)
        }
    }

    @Test(
        "DSS refusals: wrong DSS password and PIN → 403; unknown certificate, cell → 404; another user's signature → 404"
    )
    func refusals() async throws {
        try await withRawClient { emulator, client in
            let leonid = try await client.login()
            let maria = try await client.login(user: "Maria", password: "456456")
            expectEnvelope(
                try await client.json(.post, "\(dss)/certificates/", token: leonid, #"{"password":"Saprun124"}"#),
                403,
                "wrong_dss_password"
            )
            // A sign body with one field spoiled: the status and the envelope's error code.
            for (field, spoiled, status, code) in [
                ("Saprun123", "x", 403, "wrong_dss_password"),
                ("\"123\"", "\"124\"", 403, "wrong_pin"),
                ("12831", "12900", 404, "certificate_not_found"),
                ("\"hhive_id\":1", "\"hhive_id\":77", 404, "resource_not_found"),
            ] {
                let body = signBody.replacingOccurrences(of: field, with: spoiled)
                expectEnvelope(try await client.json(.post, "\(dss)/sign/", token: leonid, body), status, code)
            }
            let mariaSign = signBody.replacingOccurrences(of: "Saprun123", with: "Qwerty456").replacingOccurrences(
                of: "12831",
                with: "12900"
            )
            .replacingOccurrences(of: "\"123\"", with: "\"456\"")
            let signed = try await client.json(.post, "\(dss)/sign/", token: maria, mariaSign)
            #expect(try signed.json(context: "sign") == ["signature_id": 121])
            expectEnvelope(
                try await client.json(.delete, "\(dss)/signs/121/", token: leonid, ""),
                404,
                "signature_not_found"
            )
            expectEnvelope(
                try await client.json(.delete, "\(dss)/signs/abc/", token: leonid, ""),
                404,
                "signature_not_found"
            )
            let leonidList = try await client.json(.get, "\(dss)/signs/", token: leonid, "")
            #expect(try leonidList.json(context: "signs") == ["signs": []])
            #expect(emulator.storedSignatureIDs == [121])
            let removed = try await client.json(.delete, "\(dss)/signs/121/", token: maria, "")
            #expect(removed.status == 200)
            #expect(try removed.json(context: "remove") == [:])
            expectEnvelope(
                try await client.json(.delete, "\(dss)/signs/121/", token: maria, ""),
                404,
                "signature_not_found"
            )
        }
    }

    @Test("faults: only when enabled; an unknown fault → 400; each fault acts as documented")
    func faults() async throws {
        try await withRawClient { _, client in
            let token = try await client.login()
            let ignored = try await client.send(
                .get,
                "\(dss)/signs/",
                headers: [
                    ("Authorization", "Bearer \(token)"), ("X-Device-Id", "raw-device"),
                    (DSSEmulator.Fault.headerName, "status-500"),
                ]
            )
            #expect(ignored.status == 200)
        }
        try await withRawClient(.init(faultsEnabled: true)) { emulator, client in
            let token = try await client.login()
            func send(_ fault: String) async throws -> HTTPResponse {
                try await client.send(
                    .get,
                    "\(dss)/signs/",
                    headers: [
                        ("Authorization", "Bearer \(token)"), ("X-Device-Id", "raw-device"),
                        (DSSEmulator.Fault.headerName, fault),
                    ]
                )
            }
            expectEnvelope(try await send("teleport"), 400, "unknown_fault")
            expectEnvelope(try await send("status-500"), 500, "internal_error")
            let malformed = try await send("malformed-json")
            #expect(malformed.status == 200)
            #expect(throws: CertificateProviderError.self) { try malformed.json(context: "fault") }
            #expect(try await send("delay=50").status == 200)
            do {
                _ = try await send("drop")
                Issue.record("a dropped connection answered")
            } catch let error as HTTPClientError {
                #expect(error.code == .network)
            }
            expectEnvelope(try await send("expired-token"), 401, "token_expired")
            expectEnvelope(try await send("none"), 400, "unknown_fault")
            #expect(DSSEmulator.Fault(headerValue: "delay=250") == .delay(milliseconds: 250))
            #expect(DSSEmulator.Fault(headerValue: "delay=-1") == nil)
            #expect(DSSEmulator.Fault.expiredToken.headerValue == "expired-token")
            // libcurl resends a GET once when a reused connection closes without an answer, so "drop" arrives
            // once or twice depending on whether its connection was reused; every other request exactly once.
            let received = emulator.receivedRequests
            let drops = received.filter { $0.header(DSSEmulator.Fault.headerName) == "drop" }.count
            #expect((1...2).contains(drops))
            #expect(received.count - drops == 7)
        }
    }

    @Test("many concurrent connections are all answered")
    func concurrency() async throws {
        try await withRawClient { _, client in
            let token = try await client.login()
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<24 {
                    group.addTask {
                        index % 3 == 0
                            ? try await client.json(.post, "\(dss)/sign/", token: token, signBody).status
                            : try await client.json(.get, "\(dss)/signs/", token: token, "").status
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
            let list = try await client.json(.get, "\(dss)/signs/", token: token, "")
            let ids = try list.json(context: "signs")["signs"]?.arrayValue?.compactMap { $0["signature_id"]?.intValue }
            #expect(ids == Array(121..<129))
        }
    }
}
