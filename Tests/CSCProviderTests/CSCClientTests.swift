import CSCProvider
import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

@Suite("CSCClient against the emulator")
struct CSCClientTests {
    @Test("info: the service's description, with oauth2 at the emulator; the body is {} and carries no token")
    func info() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let info = try await makeClient(url).info()
            #expect(info.specs == "2.0.0.0")
            #expect(info.authTypes == ["oauth2client"])
            #expect(
                info.oauth2?.absoluteString
                    == url.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            )
            #expect(
                Set(info.methods).isSuperset(of: [
                    "credentials/list", "credentials/info", "credentials/authorize", "signatures/signHash",
                ])
            )
            #expect(
                info.signAlgorithms.contains("1.2.840.10045.4.3.2")
                    && info.signAlgorithms.contains("1.2.840.113549.1.1.11")
            )
            let sent = requests(emulator, "info")
            #expect(sent.count == 1)
            #expect(try members(sent.first).isEmpty)
            #expect(sent.first?.header("Authorization") == nil)
        }
    }

    @Test("every call: token, list, info, authorize, signHash; request bodies match the CSC table field for field")
    func everyCallAndBodies() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let client = makeClient(url)
            let list = try await client.listCredentials()
            #expect(list.ids == [pinCredential, scal2Credential])
            #expect(list.credentials.isEmpty)
            let detailed = try await client.listCredentials(details: true)
            #expect(detailed.credentials.map(\.id) == [pinCredential, scal2Credential])
            let credential = try await client.credentialInfo(pinCredential)
            #expect(credential.certificate == sharedSeed.users[0].certificates[0].identity.certificate)
            #expect(credential.certificates.count == 2, "leaf and the CA")
            #expect(
                credential.scal == 1 && credential.needsPIN && !credential.needsOTP && credential.authMode == "explicit"
            )
            #expect(
                credential.keyAlgorithms.contains("1.2.840.10045.4.3.2") && credential.keyCurve == "1.2.840.10045.3.1.7"
            )

            let digest = DigestAlgorithm.sha256.hash(Array("one".utf8))
            let authorization = try await client.authorize(
                credentialID: pinCredential,
                numSignatures: 1,
                pin: Secret(StandardSeed.certificatePIN)
            )
            #expect(authorization.expiresIn == CSCEmulatorCredentials.sadLifetime)
            #expect(
                !authorization.description.contains(
                    authorization.sad.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                )
            )
            let signatures = try await client.signHash(
                credentialID: pinCredential,
                sad: authorization.sad,
                hashes: [digest],
                hashAlgorithm: .sha256,
                signAlgorithm: "1.2.840.10045.4.3.2"
            )
            #expect(signatures.count == 1)
            #expect(
                credential.certificates[0].isValidSignature(
                    signatures[0],
                    forDigest: digest,
                    digestAlgorithm: .sha256,
                    scheme: .ecdsa
                )
            )

            // The token request: a client-credentials form, the secret in the form.
            let token = try #require(requests(emulator, "oauth2/token").first)
            #expect(token.header("Content-Type")?.hasPrefix("application/x-www-form-urlencoded") == true)
            let form = Set(token.text.split(separator: "&").map(String.init))
            #expect(form == ["grant_type=client_credentials", "client_id=Leonid", "client_secret=123123"])
            // The method bodies.
            let lists = requests(emulator, "credentials/list")
            #expect(try members(lists[0]).isEmpty)
            #expect(
                try members(lists[1]) == [
                    "credentialInfo": true, "certificates": "chain", "certInfo": true, "authInfo": true,
                ]
            )
            #expect(
                try members(requests(emulator, "credentials/info").first)
                    == [
                        "credentialID": .string(pinCredential), "certificates": "chain", "certInfo": true,
                        "authInfo": true,
                    ]
            )
            #expect(
                try members(requests(emulator, "credentials/authorize").first)
                    == [
                        "credentialID": .string(pinCredential), "numSignatures": 1,
                        "authData": [["id": "PIN", "value": "123"]],
                    ]
            )
            let signHash = try members(requests(emulator, "signatures/signHash").first)
            #expect(Set(signHash.keys) == ["credentialID", "SAD", "hashes", "hashAlgorithmOID", "signAlgo"])
            #expect(signHash["credentialID"] == .string(pinCredential))
            #expect(signHash["hashes"] == [.string(base64(digest))])
            #expect(signHash["hashAlgorithmOID"] == "2.16.840.1.101.3.4.2.1")
            #expect(signHash["signAlgo"] == "1.2.840.10045.4.3.2")
            #expect(
                signHash["SAD"] == .string(authorization.sad.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
            )
            // One token for all; every method but info carries it.
            #expect(requests(emulator, "oauth2/token").count == 1)
            for request in emulator.receivedRequests
            where request.path.hasPrefix("/csc/v2/") && request.path != "/csc/v2/info" {
                #expect(request.method == "POST")
                #expect(request.header("Authorization")?.hasPrefix("Bearer ") == true, "\(request.path)")
                #expect(request.header("Content-Type") == "application/json")
            }
        }
    }

    @Test("SCAL 2: authorize carries the hashes and their algorithm; hashes the SAD does not cover are refused")
    func scal2() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let client = makeClient(url)
            let credential = try await client.credentialInfo(scal2Credential)
            #expect(credential.scal == 2 && !credential.needsPIN && credential.authMode == "implicit")
            let digests = ["a", "b"].map { DigestAlgorithm.sha384.hash(Array($0.utf8)) }
            let authorization = try await client.authorize(
                credentialID: scal2Credential,
                numSignatures: 2,
                hashes: digests,
                hashAlgorithm: .sha384
            )
            #expect(
                try members(requests(emulator, "credentials/authorize").first)
                    == [
                        "credentialID": .string(scal2Credential), "numSignatures": 2,
                        "hashes": .array(digests.map { .string(base64($0)) }),
                        "hashAlgorithmOID": "2.16.840.1.101.3.4.2.2",
                    ]
            )
            let other = DigestAlgorithm.sha384.hash(Array("c".utf8))
            await expectError(.serverRejected) {
                try await client.signHash(
                    credentialID: scal2Credential,
                    sad: authorization.sad,
                    hashes: [other],
                    hashAlgorithm: .sha384,
                    signAlgorithm: "1.2.840.113549.1.1.12"
                )
            }
            let signatures = try await client.signHash(
                credentialID: scal2Credential,
                sad: authorization.sad,
                hashes: digests,
                hashAlgorithm: .sha384,
                signAlgorithm: "1.2.840.113549.1.1.12"
            )
            for (signature, digest) in zip(signatures, digests) {
                #expect(
                    credential.certificates[0].isValidSignature(
                        signature,
                        forDigest: digest,
                        digestAlgorithm: .sha384,
                        scheme: .rsaPKCS1v15
                    )
                )
            }
            // The SAD allowed two signatures: it is used up.
            await expectError(.authorizationExpired) {
                try await client.signHash(
                    credentialID: scal2Credential,
                    sad: authorization.sad,
                    hashes: [digests[0]],
                    hashAlgorithm: .sha384,
                    signAlgorithm: "1.2.840.113549.1.1.12"
                )
            }
        }
    }

    @Test("PIN and OTP: both go in authData; a wrong PIN or OTP is wrongPassword")
    func pinAndOTP() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let client = makeClient(url, client: "Maria", secret: "456456")
            let credential = try await client.credentialInfo(otpCredential)
            #expect(credential.needsPIN && credential.needsOTP && credential.authSummary == "PIN + OTP")
            _ = try await client.authorize(
                credentialID: otpCredential,
                numSignatures: 1,
                pin: Secret("456"),
                otp: Secret(CSCEmulatorCredentials.otp)
            )
            #expect(
                try members(requests(emulator, "credentials/authorize").first)["authData"]
                    == [["id": "PIN", "value": "456"], ["id": "OTP", "value": .string(CSCEmulatorCredentials.otp)]]
            )
            let wrongPIN = await expectError(.wrongPassword) {
                try await client.authorize(
                    credentialID: otpCredential,
                    numSignatures: 1,
                    pin: Secret("000"),
                    otp: Secret(CSCEmulatorCredentials.otp)
                )
            }
            #expect(wrongPIN?.reason.contains("invalid_pin") == true)
            let wrongOTP = await expectError(.wrongPassword) {
                try await client.authorize(
                    credentialID: otpCredential,
                    numSignatures: 1,
                    pin: Secret("456"),
                    otp: Secret("000000")
                )
            }
            #expect(wrongOTP?.reason.contains("invalid_otp") == true)
            #expect(wrongOTP?.reason.contains("456") == false)
        }
    }

    @Test("token renewal: an expired token answers 401 and the call is sent again with a fresh one")
    func renewalAfter401() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let client = makeClient(url)
            _ = try await client.listCredentials()
            emulator.expireAccessTokens()
            #expect(try await client.listCredentials().ids.count == 2)
            #expect(requests(emulator, "oauth2/token").count == 2)
            let lists = requests(emulator, "credentials/list")
            #expect(lists.count == 3, "first call, refused call, resent call")
            #expect(lists[1].header("Authorization") == lists[0].header("Authorization"))
            #expect(lists[2].header("Authorization") != lists[1].header("Authorization"))
        }
    }

    @Test("token renewal: a token within the renewal margin is replaced before the call, never sent")
    func renewalBeforeExpiry() async throws {
        // Every token is issued inside the renewal margin (600 s < 900 s), so each call renews first; the
        // server keeps it valid for 10 minutes, so a slow (loaded) machine cannot expire it mid-call.
        try await withEmulator(.init(accessTokenLifetime: 600, requestLogKeepsSecrets: true)) { emulator, url in
            let client = makeClient(url, renewalMargin: 900)
            for _ in 0..<3 { _ = try await client.listCredentials() }
            #expect(requests(emulator, "oauth2/token").count == 3)
            let bearers = requests(emulator, "credentials/list").compactMap { $0.header("Authorization") }
            #expect(bearers.count == 3, "each call sent once: no 401")
            #expect(Set(bearers).count == 3)
        }
    }

    @Test("token renewal on the client's clock: 31 s left reuses the token, 29 s left fetches a new one")
    func renewalOnClock() async throws {
        try await withEmulator(.init(accessTokenLifetime: 600, requestLogKeepsSecrets: true)) { emulator, url in
            let clock = ManualClock()
            var configuration = CSCClient.Configuration(
                baseURL: url,
                clientID: StandardSeed.username,
                clientSecret: Secret(StandardSeed.password),
                timeout: 10
            )
            configuration.clock = clock.sessionClock
            let client = CSCClient(configuration: configuration)
            _ = try await client.listCredentials()
            clock.advance(by: 600 - 31)
            _ = try await client.listCredentials()
            #expect(requests(emulator, "oauth2/token").count == 1)
            clock.advance(by: 2)
            _ = try await client.listCredentials()
            #expect(requests(emulator, "oauth2/token").count == 2)
            let bearers = requests(emulator, "credentials/list").compactMap { $0.header("Authorization") }
            #expect(bearers.count == 3 && bearers[0] == bearers[1] && bearers[1] != bearers[2])
        }
    }

    @Test("faults: a wrong client secret and a token that keeps expiring are authenticationFailed")
    func authenticationFaults() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let wrong = await expectError(.authenticationFailed) {
                try await makeClient(url, secret: "nope").listCredentials()
            }
            #expect(wrong?.reason.contains("invalid_client") == true)
            #expect(wrong?.reason.contains("nope") == false)
            emulator.clearReceivedRequests()
            let expiring = await expectError(.authenticationFailed) {
                try await makeClient(url, headers: faultHeader(.expiredToken)).listCredentials()
            }
            #expect(expiring?.reason.contains("expired_token") == true)
            #expect(requests(emulator, "oauth2/token").count == 2, "renewed once, then gave up")
        }
    }

    @Test("faults: an expired SAD is authorizationExpired; an unknown credential is serverRejected")
    func sadExpired() async throws {
        try await withEmulator(.faultsAndSecrets) { _, url in
            let client = makeClient(url, headers: faultHeader(.sadExpired))
            let authorization = try await client.authorize(
                credentialID: scal2Credential,
                numSignatures: 1,
                hashes: [DigestAlgorithm.sha256.hash([1])],
                hashAlgorithm: .sha256
            )
            let error = await expectError(.authorizationExpired) {
                try await client.signHash(
                    credentialID: scal2Credential,
                    sad: authorization.sad,
                    hashes: [DigestAlgorithm.sha256.hash([1])],
                    hashAlgorithm: .sha256,
                    signAlgorithm: "1.2.840.113549.1.1.11"
                )
            }
            #expect(error?.reason.contains("SAD expired") == true)
            await expectError(.serverRejected) { try await makeClient(url).credentialInfo("12900") }
        }
    }

    @Test("the emulator's request log redacts the client secret, PINs and OTPs unless told to keep them")
    func logRedaction() async throws {
        try await withEmulator(.init(faultsEnabled: true)) { emulator, url in
            let client = makeClient(url, client: "Maria", secret: "456456")
            _ = try await client.authorize(
                credentialID: otpCredential,
                numSignatures: 1,
                pin: Secret("456"),
                otp: Secret(CSCEmulatorCredentials.otp)
            )
            let token = try #require(requests(emulator, "oauth2/token").first)
            #expect(token.text.contains("client_secret=\(DSSEmulator.redactedValue)") && !token.text.contains("456456"))
            let authorize = try #require(requests(emulator, "credentials/authorize").first)
            #expect(
                try members(authorize)["authData"] == [
                    ["id": "PIN", "value": .string(DSSEmulator.redactedValue)],
                    ["id": "OTP", "value": .string(DSSEmulator.redactedValue)],
                ]
            )
            #expect(!authorize.text.contains(CSCEmulatorCredentials.otp))
        }
    }

    @Test("the emulator's CSC routes refuse unknown fields, other methods than POST and calls without a token")
    func emulatorRefusals() async throws {
        try await withEmulator(.faultsAndSecrets) { _, url in
            let transport = CurlTransport()
            var unknown = HTTPRequest(method: .post, url: url.appendingPathComponent("csc/v2/credentials/info"))
            try unknown.setJSONBody(["credentialID": "12831", "pin": "123"])
            let client = makeClient(url)
            _ = try await client.listCredentials()
            let bearer = try #require(await client.currentToken).accessToken.withUnsafeBytes {
                String(decoding: $0, as: UTF8.self)
            }
            unknown.setHeader("Authorization", "Bearer \(bearer)")
            let refused = try await transport.send(unknown)
            #expect(refused.status == 400)
            #expect(try JSONValue(parsing: refused.body)["error"] == "invalid_request")
            let get = try await transport.send(
                HTTPRequest(method: .get, url: url.appendingPathComponent("csc/v2/info"))
            )
            #expect(get.status == 405 && get.header("Allow") == "POST")
            var noToken = HTTPRequest(method: .post, url: url.appendingPathComponent("csc/v2/credentials/list"))
            try noToken.setJSONBody([:])
            let unauthorized = try await transport.send(noToken)
            #expect(unauthorized.status == 401)
            #expect(try JSONValue(parsing: unauthorized.body)["error"] == "invalid_token")
        }
    }
}
