import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import RemoteProviderSupport
import TestSupport
import Testing

/// Checks a CryptoPro error body: status, JSON `{"Message": …}` containing `fragment`.
func expectMessage(
    _ response: HTTPResponse,
    _ status: Int,
    _ fragment: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(
        response.status == status,
        "HTTP \(response.status): \(String(decoding: response.body, as: UTF8.self))",
        sourceLocation: sourceLocation
    )
    let message = (try? JSONValue(parsing: response.body))?["Message"]?.stringValue
    #expect(message?.contains(fragment) == true, "\(String(describing: message))", sourceLocation: sourceLocation)
    #expect(response.header("Content-Type")?.hasPrefix("application/json") == true, sourceLocation: sourceLocation)
}

extension RawClient {
    func cryptoProToken(
        user: String = "Leonid",
        password: String = "123123",
        clientID: String = CryptoProEmulatorClients.publicClientID,
        resource: String = CryptoProEmulatorClients.resource,
        grant: String = "password"
    ) async throws -> HTTPResponse {
        let form = HTTPRequest.formEncoded([
            ("grant_type", grant), ("username", user), ("password", password), ("client_id", clientID),
            ("resource", resource),
        ])
        return try await send(
            .post,
            "/STS/oauth/token",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array(form.utf8)
        )
    }

    func cryptoProLogin() async throws -> String {
        let response = try await cryptoProToken()
        #expect(response.status == 200)
        return try #require(try response.json(context: "token")["access_token"]?.stringValue)
    }

    func documents(_ token: String, _ json: String) async throws -> HTTPResponse {
        try await send(
            .post,
            "/SignServer/rest/api/documents",
            headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(token)")],
            body: Array(json.utf8)
        )
    }
}

@Suite("DSSEmulator CryptoPro DSS routes")
struct CryptoProRoutesTests {
    @Test("token: access_token, expires_in from the configuration, Bearer")
    func token() async throws {
        try await withRawClient(.init(accessTokenLifetime: 600)) { _, client in
            let json = try (try await client.cryptoProToken()).json(context: "token")
            #expect(json["expires_in"] == 600)
            #expect(json["token_type"] == "Bearer")
            #expect(json["access_token"]?.stringValue?.count == 64)
        }
    }

    @Test("token errors are OAuth errors with a Message")
    func tokenErrors() async throws {
        try await withRawClient { _, client in
            expectMessage(try await client.cryptoProToken(password: "bad"), 400, "incorrect")
            #expect(
                try (try await client.cryptoProToken(password: "bad")).json(context: "e")["error"] == "invalid_grant"
            )
            expectMessage(try await client.cryptoProToken(clientID: "evil"), 400, "unknown client_id")
            expectMessage(try await client.cryptoProToken(resource: "urn:other"), 400, "unknown resource")
            expectMessage(try await client.cryptoProToken(grant: "client_credentials"), 400, "not supported")
            expectMessage(
                try await client.cryptoProToken(clientID: CryptoProEmulatorClients.confidentialClientID),
                401,
                "HTTP Basic"
            )
            expectMessage(
                try await client.send(
                    .post,
                    "/STS/oauth/token",
                    headers: [("Content-Type", "application/x-www-form-urlencoded")],
                    body: Array("grant_type=password&username=Leonid".utf8)
                ),
                400,
                "'password' is missing"
            )
            expectMessage(
                try await client.send(
                    .post,
                    "/STS/oauth/token",
                    headers: [("Content-Type", "application/json")],
                    body: Array("{}".utf8)
                ),
                400,
                "x-www-form-urlencoded"
            )
            let get = try await client.send(.get, "/STS/oauth/token")
            expectMessage(get, 405, "use POST")
            #expect(get.header("Allow") == "POST")
        }
    }

    @Test("certificates: the same certificates as the FMP view, first one default")
    func certificates() async throws {
        try await withRawClient { _, client in
            let token = try await client.cryptoProLogin()
            let response = try await client.send(
                .get,
                "/SignServer/rest/api/certificates",
                headers: [("Authorization", "Bearer \(token)")]
            )
            let list = try #require(try response.json(context: "c").arrayValue)
            // The GOST certificates follow when the gost engine is there.
            let gost = GOSTEngine.isAvailable
            #expect(list.map { $0["ID"] } == [12831, 12832] + (gost ? [12833, 12834] : []))
            #expect(list.map { $0["IsDefault"] } == [true, false] + (gost ? [false, false] : []))
            #expect(list.map { $0["HasPin"] } == [true, false] + (gost ? [true, false] : []))
            let base64 = try #require(list[0]["CertificateBase64"]?.stringValue)
            let der = try #require(Data(base64Encoded: base64))
            #expect(Array(der) == sharedSeed.users[0].certificates[0].identity.certificate.derRepresentation)
            #expect(list[0]["DName"]?.stringValue == sharedSeed.users[0].certificates[0].identity.certificate.subject)
            // Maria sees only her own certificate.
            let maria = try #require(
                try (try await client.cryptoProToken(user: "Maria", password: "456456")).json(context: "t")[
                    "access_token"
                ]?.stringValue
            )
            let hers = try await client.send(
                .get,
                "/SignServer/rest/api/certificates",
                headers: [("Authorization", "Bearer \(maria)")]
            )
            #expect(try hers.json(context: "c").arrayValue?.map { $0["ID"] } == [12900] + (gost ? [12901] : []))
        }
    }

    @Test("tokens do not cross between the FMP and CryptoPro views; expired tokens are 401 with a Message")
    func tokenIsolation() async throws {
        try await withRawClient { emulator, client in
            let fmpToken = try await client.login()
            expectMessage(
                try await client.send(
                    .get,
                    "/SignServer/rest/api/certificates",
                    headers: [("Authorization", "Bearer \(fmpToken)")]
                ),
                401,
                "denied"
            )
            let cryptoProToken = try await client.cryptoProLogin()
            let fmp = try await client.json(.get, "\(dss)/signs/", token: cryptoProToken, "")
            #expect(fmp.status == 401)
            expectMessage(try await client.send(.get, "/SignServer/rest/api/certificates"), 401, "Bearer")
            emulator.expireAccessTokens()
            expectMessage(
                try await client.send(
                    .get,
                    "/SignServer/rest/api/certificates",
                    headers: [("Authorization", "Bearer \(cryptoProToken)")]
                ),
                401,
                "expired"
            )
        }
    }

    @Test("documents: every malformed input is 400 with a Message naming it")
    func documentValidation() async throws {
        try await withRawClient { _, client in
            let token = try await client.cryptoProLogin()
            let content = Data("hello".utf8).base64EncodedString()
            func body(
                type: String = "CAdES",
                parameters: String = #"{"CADESType":"BES","IsDetached":"True","Hash":"False"}"#,
                content: String? = nil,
                extra: String = ""
            ) -> String {
                #"{"Content":"\#(content ?? Data("hello".utf8).base64EncodedString())","Signature":{"Type":"\#(type)","Parameters":\#(parameters),"CertificateId":12832\#(extra)}}"#
            }
            expectMessage(try await client.documents(token, "{"), 400, "not valid JSON")
            expectMessage(try await client.documents(token, #"{"Signature":{}}"#), 400, "'Content' is missing")
            expectMessage(try await client.documents(token, body(content: "%%%")), 400, "base64")
            expectMessage(try await client.documents(token, body(type: "XAdES")), 400, "'XAdES' is not supported")
            expectMessage(
                try await client.documents(token, body(parameters: #"{"CADESType":"XLT1","IsDetached":"True"}"#)),
                400,
                "CADESType 'XLT1'"
            )
            expectMessage(
                try await client.documents(token, body(parameters: #"{"CADESType":"BES","IsDetached":"true"}"#)),
                400,
                #"must be "True" or "False""#
            )
            expectMessage(
                try await client.documents(token, body(parameters: #"{"CADESType":"BES","isDetached":"True"}"#)),
                400,
                "unknown signature parameter 'isDetached'"
            )
            expectMessage(
                try await client.documents(token, body(type: "CMS", parameters: #"{"CADESType":"BES"}"#)),
                400,
                "unknown signature parameter 'CADESType' for CMS"
            )
            expectMessage(
                try await client.documents(
                    token,
                    body(parameters: #"{"CADESType":"BES","IsDetached":"False","Hash":"True"}"#)
                ),
                400,
                "must be detached"
            )
            expectMessage(
                try await client.documents(token, body(extra: #","Pin":"1""#)),
                400,
                "unknown field 'Signature.Pin'"
            )
            expectMessage(
                try await client.documents(
                    token,
                    #"{"Content":"\#(content)","Signature":{"Type":"CAdES","Parameters":{"CADESType":"BES"},"CertificateId":"12832"}}"#
                ),
                400,
                "'Signature.CertificateId' must be an integer"
            )
            expectMessage(
                try await client.documents(token, body().replacingOccurrences(of: "12832", with: "777")),
                404,
                "certificate 777 was not found"
            )
            expectMessage(
                try await client.documents(token, body().replacingOccurrences(of: "12832", with: "12831")),
                403,
                "PIN code of certificate 12831 is required"
            )
            expectMessage(
                try await client.send(
                    .get,
                    "/SignServer/rest/api/documents",
                    headers: [("Authorization", "Bearer \(token)")]
                ),
                405,
                "use POST"
            )
            expectMessage(try await client.send(.get, "/SignServer/rest/api/other"), 404, "no route")
            let ok = try await client.documents(token, body())
            #expect(ok.status == 200)
            #expect(try ok.json(context: "sign").stringValue.flatMap { Data(base64Encoded: $0) } != nil)
        }
    }

    @Test("faults answer with CryptoPro Message bodies on CryptoPro routes")
    func faults() async throws {
        try await withRawClient(.init(faultsEnabled: true)) { _, client in
            expectMessage(
                try await client.send(
                    .get,
                    "/SignServer/rest/api/certificates",
                    headers: [(DSSEmulator.Fault.headerName, "status-500")]
                ),
                500,
                "simulated server failure"
            )
            expectMessage(
                try await client.send(
                    .get,
                    "/SignServer/rest/api/certificates",
                    headers: [(DSSEmulator.Fault.headerName, "bogus")]
                ),
                400,
                "names no fault"
            )
        }
    }

    @Test("a CryptoPro signature of a document verifies with openssl against the emulator CA")
    func signatureVerifies() async throws {
        try await withRawClient { emulator, client in
            let token = try await client.cryptoProLogin()
            let text = "CryptoPro view of the same DSS"
            let response = try await client.documents(
                token,
                #"{"Content":"\#(Data(text.utf8).base64EncodedString())","Signature":{"Type":"CAdES","Parameters":{"CADESType":"BES","IsDetached":"False","Hash":"False"},"CertificateId":0,"PinCode":"123"}}"#
            )
            let base64 = try #require(try response.json(context: "s").stringValue)
            let cms = try #require(Data(base64Encoded: base64))
            let directory = try TemporaryDirectory()
            let result = try ExternalTool.run(
                "openssl",
                [
                    "cms", "-verify", "-binary", "-cades", "-inform", "DER", "-in", try directory.write("s.der", cms),
                    "-CAfile", try directory.write("ca.pem", text: emulator.certificateAuthorityPEM),
                    "-purpose", "any", "-out", directory.path("out"),
                ]
            )
            #expect(result.succeeded, "\(result.errorOutput)")
            #expect(String(decoding: try directory.read("out"), as: UTF8.self) == text)
        }
    }
}
