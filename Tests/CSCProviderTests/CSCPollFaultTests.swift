import CSCProvider
import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

/// Faults of one operation's polls (`signatures/signPolling`, `credentials/authorizeCheck`) set on the
/// emulator: a 503 is asked again on the next poll, a malformed answer ends the wait with `.network`.
@Suite("CSC polls that fail once: a 503 is asked again, a malformed answer is an error")
struct CSCPollFaultTests {
    let digest = DigestAlgorithm.sha256.hash(Array("Акт сверки за ноябрь\n".utf8))

    /// An asynchronous key of Leonid's PIN credential and an operation it started (ECDSA, SHA-256).
    func startOperation(_ url: URL) async throws -> (any ApprovalSigningKey, PendingRemoteSignature) {
        var parameters = cscParameters(url, credentialID: pinCredential, pin: StandardSeed.certificatePIN)
        parameters[CSCProvider.ParameterKey.operationMode] = .string("asynchronous")
        let key = try await approvalKey(parameters)
        return (key, try await key.requestSignatures(forDigests: [digest], digestAlgorithm: .sha256, scheme: .ecdsa))
    }

    @Test("signPolling answers 503 once: one status call throws network; the wait asks again and gets the signature")
    func signPollingUnavailable() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let (key, operation) = try await startOperation(url)
            try emulator.failNextPoll(of: operation.operationID, with: .unavailable)
            let single = await expectError(.network) { try await key.status(of: operation) }
            #expect(single?.reason.contains("HTTP 503") == true)
            try emulator.failNextPoll(of: operation.operationID, with: .unavailable)
            try emulator.approve(operationID: operation.operationID)
            let values = try await key.waitForSignatures(
                operation,
                timeout: .seconds(120),
                pollInterval: .milliseconds(50)
            )
            let certificate = sharedSeed.users[0].certificates[0].identity.certificate
            #expect(
                certificate.isValidSignature(values[0], forDigest: digest, digestAlgorithm: .sha256, scheme: .ecdsa)
            )
            #expect(requests(emulator, "signatures/signPolling").count == 3)
        }
    }

    @Test("authorizeCheck answers 503 once during the wait: the next check gets the SAD")
    func authorizeCheckUnavailable() async throws {
        try await withEmulator(.init(authorizationApprovalValidity: 600)) { emulator, url in
            let client = makeClient(url)
            let (started, handle) = try await startWaitingAuthorization(client, digest: digest)
            try emulator.failNextPoll(of: handle, with: .unavailable)
            try emulator.approve(operationID: handle)
            let authorization = try await client.waitForAuthorization(
                started,
                timeout: .seconds(120),
                pollInterval: .milliseconds(50)
            )
            let values = try await client.signHash(
                credentialID: scal2Credential,
                sad: authorization.sad,
                hashes: [digest],
                hashAlgorithm: .sha256,
                signAlgorithm: "1.2.840.113549.1.1.11"
            )
            #expect(values.count == 1)
            #expect(requests(emulator, "credentials/authorizeCheck").count == 2)
        }
    }

    /// A client of Leonid's whose calls time out after 4 s: below the slow poll's 10 s, above what an
    /// ordinary poll takes under load.
    func impatientClient(_ url: URL) -> CSCClient {
        CSCClient(
            configuration: .init(
                baseURL: url,
                clientID: StandardSeed.username,
                clientSecret: Secret(StandardSeed.password),
                timeout: 4
            )
        )
    }

    @Test("authorizeCheck outlasts the client's timeout once: the wait asks again and gets the SAD")
    func authorizeCheckSlow() async throws {
        try await withEmulator(.init(authorizationApprovalValidity: 600)) { emulator, url in
            let (started, handle) = try await startWaitingAuthorization(makeClient(url), digest: digest)
            let client = impatientClient(url)
            try emulator.failNextPoll(of: handle, with: .slow)
            let single = await expectError(.timeout) { try await client.authorizeCheck(handle: handle) }
            #expect(single != nil)
            try emulator.failNextPoll(of: handle, with: .slow)
            try emulator.approve(operationID: handle)
            let authorization = try await client.waitForAuthorization(
                started,
                timeout: .seconds(120),
                pollInterval: .milliseconds(50)
            )
            #expect(authorization.expiresIn != nil)
            #expect(requests(emulator, "credentials/authorizeCheck").count >= 3)
        }
    }

    @Test("a check that fails once the deadline has passed: the wait asks once more and gets the SAD approved in time")
    func failureAtTheDeadline() async throws {
        try await withEmulator(.init(authorizationApprovalValidity: 600)) { emulator, url in
            let (started, handle) = try await startWaitingAuthorization(makeClient(url), digest: digest)
            try emulator.approve(operationID: handle)
            try emulator.failNextPoll(of: handle, with: .slow)
            // The first check times out after 4 s, past the wait's 1 s: only the check after it can
            // learn that the user approved.
            let authorization = try await impatientClient(url).waitForAuthorization(started, timeout: .seconds(1))
            #expect(authorization.expiresIn != nil)
            #expect(requests(emulator, "credentials/authorizeCheck").count == 2)
        }
    }

    @Test("a wait that runs out names the operation; a 503 at the deadline is asked again, a service still down named")
    func timeoutAfterUnavailable() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let (key, operation) = try await startOperation(url)
            // A zero timeout: the first poll that answers ends the wait.
            let quiet = await expectError(.timeout) { try await key.waitForSignatures(operation, timeout: .zero) }
            #expect(quiet?.reason.contains(operation.operationID) == true)
            #expect(quiet?.reason.contains("the last poll failed") == false)
            #expect(requests(emulator, "signatures/signPolling").count == 1)
            try emulator.failNextPoll(of: operation.operationID, with: .unavailable)
            let askedAgain = await expectError(.timeout) {
                try await key.waitForSignatures(operation, timeout: .zero)
            }
            #expect(askedAgain?.reason.contains("the last poll failed") == false)
            #expect(requests(emulator, "signatures/signPolling").count == 3)
            #expect(emulator.approvalState(of: operation.operationID) == .pending)
            emulator.stop()
            let down = await expectError(.timeout) { try await key.waitForSignatures(operation, timeout: .zero) }
            #expect(down?.reason.contains(operation.operationID) == true)
            #expect(down?.reason.contains("the last poll failed") == true)
        }
    }

    @Test("a malformed signPolling or authorizeCheck answer ends the wait with network naming the method")
    func malformed() async throws {
        try await withEmulator(.init(authorizationApprovalValidity: 600)) { emulator, url in
            let (key, operation) = try await startOperation(url)
            try emulator.failNextPoll(of: operation.operationID, with: .malformed)
            try emulator.approve(operationID: operation.operationID)
            let polled = await expectError(.network) {
                try await key.waitForSignatures(operation, timeout: .seconds(120), pollInterval: .milliseconds(50))
            }
            #expect(polled?.reason.contains("signatures/signPolling") == true)
            guard case .signed = try await key.status(of: operation) else {
                Issue.record("the poll after the malformed one did not give the signatures")
                return
            }
            let client = makeClient(url)
            let (started, handle) = try await startWaitingAuthorization(client, digest: digest)
            try emulator.failNextPoll(of: handle, with: .malformed)
            let checked = await expectError(.network) {
                try await client.waitForAuthorization(started, timeout: .seconds(120), pollInterval: .milliseconds(50))
            }
            #expect(checked?.reason.contains("credentials/authorizeCheck") == true)
        }
    }

    @Test("the admin route sets a poll fault; an unknown operation is 404")
    func adminRoute() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let (key, operation) = try await startOperation(url)
            let transport = try CurlTransport(configuration: .init())
            let route = url.appendingPathComponent("emulator/approvals/\(operation.operationID)/unavailable")
            let answer = try await transport.send(HTTPRequest(method: .post, url: route))
            let fault = try JSONValue(parsing: answer.body)["fault"]
            #expect(answer.status == 200 && fault == "unavailable")
            await expectError(.network) { try await key.status(of: operation) }
            #expect(try await key.status(of: operation) == .waiting)
            let unknown = url.appendingPathComponent("emulator/approvals/op-unknown/malformed")
            #expect(try await transport.send(HTTPRequest(method: .post, url: unknown)).status == 404)
        }
    }
}
