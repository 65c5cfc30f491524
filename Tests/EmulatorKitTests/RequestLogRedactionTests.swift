import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

@Suite("DSSEmulator: the request log keeps no secrets unless asked")
struct RequestLogRedactionTests {
    /// Sends every kind of secret both APIs take: platform password (form), DSS password and PIN
    /// (JSON), CryptoPro password (form), PIN (JSON), client secret (HTTP Basic), and a wrong password.
    private func sendSecrets(_ client: RawClient) async throws {
        let token = try await client.login()
        #expect(
            try await client.json(.post, "\(dss)/certificates/", token: token, #"{"password":"Saprun123"}"#).status
                == 200
        )
        #expect(try await client.json(.post, "\(dss)/sign/", token: token, signBody).status == 200)
        _ = try await client.json(.post, "\(dss)/certificates/", token: token, #"{"password":"Wr0ng-Secret-77"}"#)
        let cryptoPro = try await client.cryptoProLogin()
        _ = try await client.documents(
            cryptoPro,
            #"{"Content":"aGk=","Signature":{"Type":"CMS","CertificateId":12831,"PinCode":"123","Parameters":{}}}"#
        )
        let basic = Data(
            "\(CryptoProEmulatorClients.confidentialClientID):\(CryptoProEmulatorClients.confidentialClientSecret)".utf8
        ).base64EncodedString()
        let form = HTTPRequest.formEncoded([
            ("grant_type", "password"), ("username", "Leonid"), ("password", "123123"),
            ("client_id", CryptoProEmulatorClients.confidentialClientID),
            ("resource", CryptoProEmulatorClients.resource),
        ])
        _ = try await client.send(
            .post,
            "/STS/oauth/token",
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Authorization", "Basic \(basic)")],
            body: Array(form.utf8)
        )
    }

    private func logText(_ emulator: DSSEmulator) -> String {
        emulator.receivedRequests.map { request in
            request.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n") + "\n" + request.text
        }.joined(separator: "\n---\n")
    }

    @Test("by default passwords, PINs and client secrets are REDACTED; the other fields stay")
    func redactedByDefault() async throws {
        try await withRawClient { emulator, client in
            try await sendSecrets(client)
            let log = logText(emulator)
            for secret in [
                "123123", "Saprun123", "Wr0ng-Secret-77", "\"123\"", CryptoProEmulatorClients.confidentialClientSecret,
                Data(
                    "\(CryptoProEmulatorClients.confidentialClientID):\(CryptoProEmulatorClients.confidentialClientSecret)"
                        .utf8
                ).base64EncodedString(),
            ] {
                #expect(!log.contains(secret), "the request log keeps \(secret)")
            }
            let obtain = try #require(emulator.receivedRequests.first { $0.path.hasSuffix("/auth/jwt/obtain/") })
            #expect(
                obtain.text
                    == "environment=Leonid_environment&project=Leonid_project&username=Leonid&password=\(DSSEmulator.redactedValue)&device_id=raw-device"
            )
            let sign = try #require(emulator.receivedRequests.first { $0.path.hasSuffix("/sign/") })
            #expect(sign.json?["password"]?.stringValue == DSSEmulator.redactedValue)
            #expect(sign.json?["certificate_pin"]?.stringValue == DSSEmulator.redactedValue)
            #expect(sign.json?["table"]?.stringValue == "ПланированиеБюджета")
            let document = try #require(emulator.receivedRequests.first { $0.path.hasSuffix("/documents") })
            #expect(document.json?["Signature"]?["PinCode"]?.stringValue == DSSEmulator.redactedValue)
            #expect(document.json?["Signature"]?["CertificateId"]?.intValue == 12831)
            // Bearer tokens stay (tests compare them); they are not passwords.
            #expect(document.header("Authorization")?.hasPrefix("Bearer ") == true)
            #expect(emulator.receivedRequests.last?.header("Authorization") == "Basic \(DSSEmulator.redactedValue)")
        }
    }

    @Test("requestLogKeepsSecrets keeps the bytes exactly as sent")
    func keptWhenAsked() async throws {
        try await withRawClient(.init(requestLogKeepsSecrets: true)) { emulator, client in
            try await sendSecrets(client)
            let sign = try #require(emulator.receivedRequests.first { $0.path.hasSuffix("/sign/") })
            #expect(sign.text == signBody)
            #expect(logText(emulator).contains("password=123123"))
        }
    }
}
