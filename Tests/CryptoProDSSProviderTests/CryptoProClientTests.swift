import CertificateProviders
import CertificateProvidersTesting
import CryptoProDSSProvider
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

@Suite("CryptoProDSSClient against the emulator over loopback HTTP")
struct CryptoProClientTests {
    @Test("login sends the documented form and tracks expires_in")
    func loginForm() async throws {
        // A lifetime far above any test's run time: under ASan on a loaded machine the whole suite
        // once took 31 minutes, and a 900 s token had expired by the isAuthenticated check.
        try await withEmulator(.init(accessTokenLifetime: 7200, requestLogKeepsSecrets: true)) { emulator, url in
            let before = Date()
            let client = makeClient(url)
            let token = try await client.login(username: "Leonid", password: Secret("123123"))
            #expect(
                token.expiresAt >= before.addingTimeInterval(7199) && token.expiresAt <= Date().addingTimeInterval(7201)
            )
            #expect(
                !String(describing: token).contains(
                    token.accessToken.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                )
            )
            #expect(await client.isAuthenticated)
            let sent = try #require(requests(emulator, endingWith: "/STS/oauth/token").first)
            #expect(sent.method == "POST")
            #expect(sent.header("Content-Type") == "application/x-www-form-urlencoded")
            #expect(sent.header("Authorization") == nil)
            #expect(
                sent.text
                    == "grant_type=password&username=Leonid&password=123123&client_id=cryptopro.cloud.csp&resource=urn%3Acryptopro%3Adss%3Asignserver%3Asignserver"
            )
        }
    }

    @Test("a confidential client authenticates with HTTP Basic; a wrong secret is authenticationFailed")
    func confidentialClient() async throws {
        try await withEmulator(.init(faultsEnabled: true, requestLogKeepsSecrets: true)) { emulator, url in
            let good = makeClient(
                url,
                clientID: CryptoProEmulatorClients.confidentialClientID,
                clientSecret: Secret(CryptoProEmulatorClients.confidentialClientSecret)
            )
            try await good.login(username: "Leonid", password: Secret("123123"))
            let header = try #require(requests(emulator, endingWith: "/oauth/token").last?.header("Authorization"))
            let decoded = String(
                decoding: try #require(Data(base64Encoded: String(header.dropFirst(6)))),
                as: UTF8.self
            )
            #expect(header.hasPrefix("Basic "))
            #expect(decoded == "certsign.confidential:Conf1dential-Secret")
            let bad = makeClient(
                url,
                clientID: CryptoProEmulatorClients.confidentialClientID,
                clientSecret: Secret("nope")
            )
            let error = await expectError(.authenticationFailed) {
                try await bad.login(username: "Leonid", password: Secret("123123"))
            }
            #expect(error?.reason.contains("HTTP Basic") == true)
            #expect(error?.reason.contains("nope") == false)
        }
    }

    @Test("wrong password and unknown user are authenticationFailed with the server's message, no secret")
    func wrongPassword() async throws {
        try await withEmulator(.faults) { _, url in
            let client = makeClient(url)
            let error = await expectError(.authenticationFailed) {
                try await client.login(username: "Leonid", password: Secret("wrong-pass-77"))
            }
            #expect(error?.reason.contains("incorrect") == true)
            #expect(error?.reason.contains("wrong-pass-77") == false)
            await expectError(.authenticationFailed) {
                try await client.login(username: "Nobody", password: Secret("x"))
            }
            await expectError(.authenticationFailed) { try await client.certificates() }
        }
    }

    @Test("certificates: ids, default, PIN flag, friendly name and parsed certificates")
    func certificates() async throws {
        try await withEmulator(.faults) { emulator, url in
            let client = try await loggedInClient(url)
            let list = try await client.certificates()
            // The GOST certificates follow when the gost engine is there.
            let gost = GOSTEngine.isAvailable
            #expect(list.map(\.id) == [12831, 12832] + (gost ? [12833, 12834] : []))
            #expect(list.map(\.isDefault) == [true, false] + (gost ? [false, false] : []))
            #expect(list.map(\.hasPIN) == [true, false] + (gost ? [true, false] : []))
            #expect(list.map(\.status) == Array(repeating: "ACTIVE", count: list.count))
            #expect(list[0].friendlyName == "Леонид Тестов")
            let leonid = try #require(sharedSeed.users.first { $0.username == "Leonid" })
            #expect(list.map(\.certificate) == leonid.certificates.map(\.identity.certificate))
            #expect(list[1].certificate.publicKeyAlgorithm == .rsa)
            let sent = try #require(requests(emulator, endingWith: "/SignServer/rest/api/certificates").first)
            #expect(sent.method == "GET")
            #expect(sent.header("Authorization")?.hasPrefix("Bearer ") == true)
        }
    }

    @Test("CAdES-BES detached, CAdES-BES attached and CMS detached/attached all verify with openssl cms -verify")
    func signForms() async throws {
        try await withEmulator(.faults) { emulator, url in
            let client = try await loggedInClient(url)
            let pin = Secret(StandardSeed.certificatePIN)
            let detached = try await client.sign(document: document, certificateID: 12831, pin: pin)
            #expect(try !isAttached(detached))
            #expect(try hasSigningCertificateV2(detached))
            try opensslVerify(detached, emulator: emulator, cades: true, detachedContent: document)

            let attached = try await client.sign(
                document: document,
                certificateID: 12831,
                pin: pin,
                parameters: .init(isDetached: false)
            )
            #expect(try isAttached(attached))
            #expect(try opensslVerify(attached, emulator: emulator, cades: true) == document)

            let cmsDetached = try await client.sign(
                document: document,
                certificateID: 12832,
                pin: nil,
                parameters: .init(type: .cms)
            )
            #expect(try !hasSigningCertificateV2(cmsDetached))
            try opensslVerify(cmsDetached, emulator: emulator, cades: false, detachedContent: document)

            let cmsAttached = try await client.sign(
                document: document,
                certificateID: 12832,
                pin: nil,
                parameters: .init(type: .cms, isDetached: false)
            )
            #expect(try opensslVerify(cmsAttached, emulator: emulator, cades: false) == document)
        }
    }

    @Test("Hash: True signs a SHA-256 or SHA-512 digest into a detached signature of the document")
    func signHash() async throws {
        try await withEmulator(.faults) { emulator, url in
            let client = try await loggedInClient(url)
            for algorithm in [DigestAlgorithm.sha256, .sha512] {
                let cms = try await client.sign(
                    document: algorithm.hash(document),
                    certificateID: 12832,
                    pin: nil,
                    parameters: .init(isHash: true)
                )
                try opensslVerify(cms, emulator: emulator, cades: true, detachedContent: document)
            }
            await expectError(.invalidParameter) {
                try await client.sign(
                    document: DigestAlgorithm.sha256.hash(document),
                    certificateID: 12832,
                    pin: nil,
                    parameters: .init(isDetached: false, isHash: true)
                )
            }
            let error = await expectError(.serverRejected) {
                try await client.sign(
                    document: [1, 2, 3],
                    certificateID: 12832,
                    pin: nil,
                    parameters: .init(isHash: true)
                )
            }
            #expect(error?.reason.contains("32, 48 or 64 bytes") == true)
        }
    }

    @Test("the sign request body matches ARCHITECTURE.md field for field")
    func requestBody() async throws {
        try await withEmulator(.init(faultsEnabled: true, requestLogKeepsSecrets: true)) { emulator, url in
            let client = try await loggedInClient(url)
            _ = try await client.sign(document: document, certificateID: 12831, pin: Secret("123"))
            _ = try await client.sign(
                document: document,
                certificateID: 0,
                pin: Secret("123"),
                parameters: .init(type: .cms, isDetached: false)
            )
            let sent = requests(emulator, endingWith: "/SignServer/rest/api/documents")
            #expect(sent.count == 2)
            #expect(sent.allSatisfy { $0.method == "POST" && $0.header("Content-Type") == "application/json" })
            let expectedCAdES: JSONValue = [
                "Content": .string(Data(document).base64EncodedString()),
                "Signature": [
                    "Type": "CAdES",
                    "Parameters": ["CADESType": "BES", "IsDetached": "True", "Hash": "False"],
                    "CertificateId": 12831,
                    "PinCode": "123",
                ],
            ]
            #expect(sent[0].json == expectedCAdES)
            let expectedCMS: JSONValue = [
                "Content": .string(Data(document).base64EncodedString()),
                "Signature": [
                    "Type": "CMS",
                    "Parameters": ["IsDetached": "False", "Hash": "False"],
                    "CertificateId": 0,
                    "PinCode": "123",
                ],
            ]
            #expect(sent[1].json == expectedCMS)
            // Case-sensitive names: exactly these keys, nothing more.
            #expect(sent[0].json?.objectValue?.keys.sorted() == ["Content", "Signature"])
            #expect(
                sent[0].json?["Signature"]?.objectValue?.keys.sorted() == [
                    "CertificateId", "Parameters", "PinCode", "Type",
                ]
            )
        }
    }

    @Test("CertificateId 0 signs with the default certificate (12831)")
    func defaultCertificate() async throws {
        try await withEmulator(.faults) { emulator, url in
            let client = try await loggedInClient(url)
            let cms = try await client.sign(document: document, certificateID: 0, pin: Secret("123"))
            try opensslVerify(cms, emulator: emulator, cades: true, detachedContent: document)
            #expect(try signerCertificate(cms) == sharedSeed.users[0].certificates[0].identity.certificate)
            let rsa = try await client.sign(document: document, certificateID: 12832, pin: nil)
            #expect(try signerCertificate(rsa) == sharedSeed.users[0].certificates[1].identity.certificate)
        }
    }

    @Test("wrong or missing PIN is wrongPassword; unknown certificate is serverRejected with the Message")
    func signErrors() async throws {
        try await withEmulator(.faults) { _, url in
            let client = try await loggedInClient(url)
            let wrong = await expectError(.wrongPassword) {
                try await client.sign(document: document, certificateID: 12831, pin: Secret("999"))
            }
            #expect(wrong?.reason.contains("PIN code of certificate 12831 is wrong") == true)
            #expect(wrong?.reason.contains("999") == false)
            await expectError(.wrongPassword) {
                try await client.sign(document: document, certificateID: 12831, pin: nil)
            }
            let unknown = await expectError(.serverRejected) {
                try await client.sign(document: document, certificateID: 4242, pin: nil)
            }
            #expect(unknown?.reason.contains("HTTP 404") == true)
            #expect(unknown?.reason.contains("certificate 4242 was not found") == true)
        }
    }

    @Test("5xx is network with the Message; malformed JSON is a clear network error; both sent once")
    func serverFailures() async throws {
        try await withEmulator(.faults) { emulator, url in
            let client500 = makeClient(url, headers: [(DSSEmulator.Fault.headerName, "status-500")])
            await client500.adopt(try #require(await (try await loggedInClient(url)).currentToken))
            emulator.clearReceivedRequests()
            let error = await expectError(.network) {
                try await client500.sign(document: document, certificateID: 12832, pin: nil)
            }
            #expect(error?.reason.contains("HTTP 500") == true)
            #expect(error?.reason.contains("simulated server failure") == true)
            #expect(requests(emulator, endingWith: "/documents").count == 1)

            let malformed = makeClient(url, headers: [(DSSEmulator.Fault.headerName, "malformed-json")])
            await malformed.adopt(try #require(await (try await loggedInClient(url)).currentToken))
            emulator.clearReceivedRequests()
            let bad = await expectError(.network) {
                try await malformed.sign(document: document, certificateID: 12832, pin: nil)
            }
            #expect(bad?.reason.contains("not JSON") == true)
            #expect(requests(emulator, endingWith: "/documents").count == 1)
            await expectError(.network) { try await malformed.certificates() }
            await expectError(.network) { try await malformed.login(username: "Leonid", password: Secret("123123")) }
        }
    }

    @Test("a dropped connection on sign is network and is not resent")
    func droppedSign() async throws {
        try await withEmulator(.faults) { emulator, url in
            let token = try #require(await (try await loggedInClient(url)).currentToken)
            let client = makeClient(url, headers: [(DSSEmulator.Fault.headerName, "drop")])
            await client.adopt(token)
            emulator.clearReceivedRequests()
            await expectError(.network) { try await client.sign(document: document, certificateID: 12832, pin: nil) }
            #expect(requests(emulator, endingWith: "/documents").count == 1)
        }
    }

    @Test("a slow server is a timeout after the configured time, sent once")
    func timeout() async throws {
        try await withEmulator(.faults) { emulator, url in
            let token = try #require(await (try await loggedInClient(url)).currentToken)
            let client = makeClient(url, timeout: 1, headers: [(DSSEmulator.Fault.headerName, "delay=3000")])
            await client.adopt(token)
            emulator.clearReceivedRequests()
            await expectError(.timeout) { try await client.sign(document: document, certificateID: 12832, pin: nil) }
            // A busy server may log the request after the client gave up: wait for it, then check
            // that it came once.
            for _ in 0..<100 where requests(emulator, endingWith: "/documents").isEmpty {
                try await Task.sleep(for: .milliseconds(50))
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(requests(emulator, endingWith: "/documents").count == 1)
        }
    }

    @Test("a server-side expired token gets one fresh login and the call succeeds")
    func renewalOn401() async throws {
        try await withEmulator(.faults) { emulator, url in
            let client = try await loggedInClient(url)
            let first = try #require(await client.currentToken)
            emulator.expireAccessTokens()
            emulator.clearReceivedRequests()
            let cms = try await client.sign(document: document, certificateID: 12832, pin: nil)
            try opensslVerify(cms, emulator: emulator, cades: true, detachedContent: document)
            #expect(
                emulator.receivedRequests.map(\.path) == [
                    "/SignServer/rest/api/documents", "/STS/oauth/token", "/SignServer/rest/api/documents",
                ]
            )
            let second = try #require(await client.currentToken)
            #expect(first.accessToken != second.accessToken)
        }
    }

    @Test("a token that keeps being refused ends in authenticationFailed after one fresh login")
    func renewalGivesUp() async throws {
        try await withEmulator(.faults) { emulator, url in
            let client = makeClient(url, headers: [(DSSEmulator.Fault.headerName, "expired-token")])
            try await client.login(username: "Leonid", password: Secret("123123"))
            emulator.clearReceivedRequests()
            let error = await expectError(.authenticationFailed) { try await client.certificates() }
            #expect(error?.reason.contains("after a fresh login") == true)
            #expect(
                emulator.receivedRequests.map(\.path) == [
                    "/SignServer/rest/api/certificates", "/STS/oauth/token", "/SignServer/rest/api/certificates",
                ]
            )
        }
    }

    @Test("a token close to expiry (expires_in within the renewal margin) is renewed before the call")
    func proactiveRenewal() async throws {
        // Issued inside the renewal margin (600 s < 900 s), so each call renews first; valid at the server for
        // 10 minutes, so a slow (loaded) machine cannot expire it mid-call.
        try await withEmulator(.init(accessTokenLifetime: 600)) { emulator, url in
            let client = makeClient(url, renewalMargin: 900)
            try await client.login(username: "Leonid", password: Secret("123123"))
            #expect(await !client.isAuthenticated)
            emulator.clearReceivedRequests()
            _ = try await client.certificates()
            _ = try await client.certificates()
            #expect(
                emulator.receivedRequests.map(\.path) == [
                    "/STS/oauth/token", "/SignServer/rest/api/certificates",
                    "/STS/oauth/token", "/SignServer/rest/api/certificates",
                ]
            )
        }
    }

    @Test("the renewal margin is measured on the client's clock: 31 s left reuses the token, 29 s renews it")
    func renewalOnClock() async throws {
        try await withEmulator(.init(accessTokenLifetime: 600)) { emulator, url in
            let clock = ManualClock()
            let client = CryptoProDSSClient(
                configuration: .init(baseURL: url, timeout: 10, clock: clock.sessionClock)
            )
            try await client.login(username: "Leonid", password: Secret("123123"))
            clock.advance(by: 600 - 31)
            #expect(await client.isAuthenticated)
            emulator.clearReceivedRequests()
            _ = try await client.certificates()
            #expect(emulator.receivedRequests.map(\.path) == ["/SignServer/rest/api/certificates"])
            clock.advance(by: 2)
            #expect(await !client.isAuthenticated)
            _ = try await client.certificates()
            #expect(
                emulator.receivedRequests.map(\.path) == [
                    "/SignServer/rest/api/certificates", "/STS/oauth/token", "/SignServer/rest/api/certificates",
                ]
            )
        }
    }

    @Test("concurrent calls with an expired token share one login")
    func concurrentRenewal() async throws {
        try await withEmulator(.faults) { emulator, url in
            let client = try await loggedInClient(url)
            emulator.expireAccessTokens()
            emulator.clearReceivedRequests()
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<6 { group.addTask { try await client.certificates().count } }
                let expected = sharedSeed.users[0].certificates.count
                for try await count in group { #expect(count == expected) }
            }
            #expect(requests(emulator, endingWith: "/oauth/token").count == 1)
        }
    }

    @Test("an adopted token without credentials cannot be renewed: authenticationFailed")
    func adoptedTokenExpires() async throws {
        try await withEmulator(.faults) { emulator, url in
            let token = try #require(await (try await loggedInClient(url)).currentToken)
            let client = makeClient(url)
            await client.adopt(token)
            #expect(try await client.certificates().count == sharedSeed.users[0].certificates.count)
            emulator.expireAccessTokens()
            await expectError(.authenticationFailed) { try await client.certificates() }
        }
    }

    @Test("clear-text http to a non-loopback host is refused before any request")
    func endpointPolicy() async throws {
        let client = CryptoProDSSClient(
            configuration: .init(baseURL: try #require(URL(string: "http://dss.example.com/")))
        )
        let error = await expectError(.invalidParameter) {
            try await client.login(username: "Leonid", password: Secret("123123"))
        }
        #expect(error?.reason.contains("clear-text") == true)
    }

    @Test("malformed certificate lists are network errors naming the field")
    func malformedCertificates() async throws {
        let transport = CannedTransport(
            token: #"{"access_token":"t","expires_in":3600,"token_type":"Bearer"}"#,
            certificates: #"[{"ID":1,"CertificateBase64":"AAAA","IsDefault":true}]"#
        )
        let client = CryptoProDSSClient(
            configuration: .init(baseURL: try #require(URL(string: "https://dss.example/"))),
            transport: transport
        )
        try await client.login(username: "u", password: Secret("p"))
        let error = await expectError(.network) { try await client.certificates() }
        #expect(error?.reason.contains("'[0].CertificateBase64' is not a DER certificate") == true)

        let notArray = CryptoProDSSClient(
            configuration: .init(baseURL: try #require(URL(string: "https://dss.example/"))),
            transport: CannedTransport(token: #"{"access_token":"t","expires_in":3600}"#, certificates: #"{"ID":1}"#)
        )
        try await notArray.login(username: "u", password: Secret("p"))
        let shape = await expectError(.network) { try await notArray.certificates() }
        #expect(shape?.reason.contains("must be a JSON array, found object") == true)

        let noToken = CryptoProDSSClient(
            configuration: .init(baseURL: try #require(URL(string: "https://dss.example/"))),
            transport: CannedTransport(token: #"{"expires_in":3600}"#, certificates: "[]")
        )
        let missing = await expectError(.network) { try await noToken.login(username: "u", password: Secret("p")) }
        #expect(missing?.reason.contains("'access_token' is missing") == true)
    }
}

/// A canned transport for malformed server answers the emulator does not produce (wrong JSON shapes).
struct CannedTransport: HTTPTransport {
    var token: String
    var certificates: String

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = request.url.path.hasSuffix("/oauth/token") ? token : certificates
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }
}
