import CertificateProviders
import EmulatorKit
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

@Suite("FMPClient: what goes over the wire, tokens, sessions")
struct FMPClientProtocolTests {
    @Test("auth sends the seed's form fields; sign sends exactly the documented JSON with bearer and device headers")
    func exactRequests() async throws {
        try await withEmulator(.init(requestLogKeepsSecrets: true)) { emulator, url in
            let client = try await loggedInClient(url)
            _ = try await client.sign(
                resource: StandardSeed.resource,
                table: StandardSeed.table,
                params: ["year": 2026],
                column: StandardSeed.column,
                hhiveID: 1,
                dssPassword: Secret(StandardSeed.dssPassword),
                certificateID: 12831,
                certificatePIN: Secret("123")
            )
            let obtain = try #require(requests(emulator, endingWith: "/auth/jwt/obtain/").first)
            #expect(obtain.method == "POST")
            #expect(obtain.path == "/api/v1/auth/jwt/obtain/")
            #expect(obtain.header("Content-Type") == "application/x-www-form-urlencoded")
            #expect(
                obtain.text
                    == "environment=Leonid_environment&project=Leonid_project&username=Leonid&password=123123&device_id=test-device-1"
            )

            let sign = try #require(requests(emulator, endingWith: "/sign/").first)
            #expect(sign.path == "/api/v1/dss/Leonid_environment/Leonid_project/sign/")
            #expect(sign.header("Content-Type") == "application/json")
            #expect(sign.header("X-Device-Id") == "test-device-1")
            #expect(sign.header("Authorization")?.hasPrefix("Bearer ") == true)
            let expected: JSONValue = [
                "resource": "GetBudgetPlanning", "table": "ПланированиеБюджета", "params": ["year": 2026],
                "column": "Номер",
                "hhive_id": 1, "password": "Saprun123", "certificate_id": 12831, "certificate_pin": "123",
            ]
            #expect(sign.json == expected)
        }
    }

    @Test("an expired access token is refreshed once and the call retried")
    func refresh() async throws {
        try await withEmulator { emulator, url in
            let client = try await loggedInClient(url)
            let before = try #require(await client.exportSession())
            emulator.expireAccessTokens()
            emulator.clearReceivedRequests()
            #expect(try await client.signs().value.isEmpty)
            #expect(routeLog(emulator) == ["signs", "refresh", "signs"])
            let tokens = emulator.receivedRequests.compactMap { $0.header("Authorization") }
            #expect(tokens.count == 2 && tokens[0] != tokens[1])
            let after = try #require(await client.exportSession())
            #expect(after.token != before.token)
            #expect(after.refreshToken != before.refreshToken)
        }
    }

    @Test("when the refresh token is refused too, the client logs in again once")
    func reauthenticate() async throws {
        try await withEmulator { emulator, url in
            let client = try await loggedInClient(url)
            emulator.revokeAllTokens()
            emulator.clearReceivedRequests()
            #expect(try await signSample(client).value == 121)
            #expect(routeLog(emulator) == ["sign", "refresh", "obtain", "sign"])
            #expect(emulator.storedSignatureIDs == [121])
        }
    }

    @Test("still 401 after refresh and re-login → .authenticationFailed, and nothing more is sent")
    func persistentExpiry() async throws {
        try await withEmulator(.init(faultsEnabled: true)) { emulator, url in
            let client = try await loggedInClient(url, headers: [(DSSEmulator.Fault.headerName, "expired-token")])
            emulator.clearReceivedRequests()
            await expectError(.authenticationFailed) { try await client.signs() }
            #expect(routeLog(emulator) == ["signs", "refresh", "signs", "obtain", "signs"])
            #expect(await client.lastEnvelope?.http.status == 401)
            #expect(await client.lastEnvelope?.errors.first?.code == "token_expired")
        }
    }

    @Test("refreshSession() renews the pair on demand; logout() forgets it")
    func explicitRefreshAndLogout() async throws {
        try await withEmulator { emulator, url in
            let client = try await loggedInClient(url)
            let before = try #require(await client.exportSession())
            try await client.refreshSession()
            let after = try #require(await client.exportSession())
            #expect(after.token != before.token)
            #expect(routeLog(emulator).suffix(1) == ["refresh"])
            await client.logout()
            #expect(await client.isAuthenticated == false)
            #expect(await client.exportSession() == nil)
            await expectError(.authenticationFailed) { try await client.refreshSession() }
            await expectError(.authenticationFailed) { try await client.signs() }
        }
    }

    @Test("a resumed session without credentials fails with .authenticationFailed when its tokens are revoked")
    func resumedSessionCannotRelogin() async throws {
        try await withEmulator { emulator, url in
            let first = try await loggedInClient(url)
            let session = try #require(await first.exportSession())
            let resumed = FMPClient(session: session)
            #expect(try await resumed.signs().value.isEmpty)
            emulator.revokeAllTokens()
            emulator.clearReceivedRequests()
            await expectError(.authenticationFailed) { try await resumed.signs() }
            #expect(routeLog(emulator) == ["signs", "refresh"])
        }
    }

    @Test("the session round-trips through JSON and never shows its tokens")
    func sessionCodable() async throws {
        try await withEmulator { _, url in
            let client = try await loggedInClient(url)
            let session = try #require(await client.exportSession())
            let data = try JSONEncoder().encode(session)
            let decoded = try JSONDecoder().decode(FMPSession.self, from: data)
            #expect(decoded == session)
            #expect(decoded.username == "Leonid")
            #expect(!session.description.contains(session.token))
            #expect(!session.description.contains(session.refreshToken))
            let other = makeClient(url)
            try await other.importSession(decoded)
            #expect(try await other.signs().value.isEmpty)
            var foreign = decoded
            foreign.project = "Other_project"
            await expectError(.invalidParameter) { try await other.importSession(foreign) }
        }
    }

    @Test("eight concurrent calls on an expired token share one refresh")
    func concurrentRefresh() async throws {
        try await withEmulator { emulator, url in
            let client = try await loggedInClient(url)
            emulator.expireAccessTokens()
            emulator.clearReceivedRequests()
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 { group.addTask { try await client.signs().value.count } }
                for try await count in group { #expect(count == 0) }
            }
            #expect(routeLog(emulator).filter { $0 == "refresh" }.count == 1)
            #expect(routeLog(emulator).filter { $0 == "obtain" }.count == 0)
        }
    }

    @Test("the seed helpers read the envelope JSON like the sample app")
    func seedHelpers() {
        let ok: JSONValue = [
            "status": "ok", "http": ["status": 200], "errors": [], "result": ["raw": ["signature_id": 121]],
        ]
        #expect(FMPClient.signatureID(from: ok) == 121)
        #expect(FMPClient.responseStatus(from: ok) == "ok")
        let failed: JSONValue = ["status": "error", "result": ["raw": ["signature_id": 121]]]
        #expect(FMPClient.signatureID(from: failed) == nil)
        #expect(FMPClient.responseStatus(from: nil) == nil)
        let envelope = FMPEnvelope(status: "ok", http: .init(status: 200), result: .init(raw: ["signature_id": 7]))
        #expect(FMPClient.signatureID(from: envelope) == 7)
        #expect(envelope.jsonValue["http"]?["status"] == 200)
    }

    @Test("routes can be overridden and values are percent-encoded as path segments")
    func routes() throws {
        let host = try #require(URL(string: "https://fmp.example.com/base/"))
        let url = FMPRoutes.url(
            host: host,
            template: FMPRoutes.standard.removeSign,
            apiVersion: "v1",
            environment: "Окружение 1",
            project: "a/b",
            id: 121
        )
        #expect(
            url?.absoluteString
                == "https://fmp.example.com/base/api/v1/dss/%D0%9E%D0%BA%D1%80%D1%83%D0%B6%D0%B5%D0%BD%D0%B8%D0%B5%201/a%2Fb/signs/121/"
        )
        let custom = FMPRoutes(signs: "/mobile/{v}/history/{env}")
        #expect(
            FMPRoutes.url(host: host, template: custom.signs, apiVersion: "v2", environment: "E", project: "P")?
                .absoluteString
                == "https://fmp.example.com/base/mobile/v2/history/E"
        )
    }
}
