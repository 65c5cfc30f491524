import CSCProvider
import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

@Suite("the emulator's approval admin route")
struct ApprovalAdminRouteTests {
    @Test("GET lists the operations with their state; a second decision is 409; a non-loopback emulator answers 403")
    func adminRoute() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let client = makeClient(url)
            let digest = DigestAlgorithm.sha256.hash(Array("x".utf8))
            let sad = try await client.authorize(
                credentialID: scal2Credential,
                numSignatures: 1,
                hashes: [digest],
                hashAlgorithm: .sha256
            )
            let id = try await client.signHashAsynchronously(
                credentialID: scal2Credential,
                sad: sad.sad,
                hashes: [digest],
                hashAlgorithm: .sha256,
                signAlgorithm: "1.2.840.113549.1.1.11",
                validity: 60
            )
            let transport = try CurlTransport(configuration: .init())
            let list = try await transport.send(HTTPRequest(url: url.appendingPathComponent("emulator/approvals")))
            let operations = try #require(JSONValue(parsing: list.body)["operations"]?.arrayValue)
            #expect(operations.count == 1)
            #expect(operations.first?["id"]?.stringValue == id && operations.first?["state"] == "pending")
            let approveURL = url.appendingPathComponent("emulator/approvals/\(id)/approve")
            let first = try await transport.send(HTTPRequest(method: .post, url: approveURL))
            let second = try await transport.send(HTTPRequest(method: .post, url: approveURL))
            #expect(first.status == 200 && second.status == 409)
            #expect(emulator.approvalState(of: id) == .approved)
        }
        let remote = try DSSEmulator(configuration: .init(host: "192.0.2.1"), seed: sharedSeed)
        let answer = try #require(remote.handle(method: "GET", path: "/emulator/approvals", headers: [], body: []))
        #expect(answer.status == 403)
    }
}
