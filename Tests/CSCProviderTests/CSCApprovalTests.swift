import CSCProvider
import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import JSON
import SignatureJournal
import Signing
import TestSupport
import Testing

/// CSC asynchronous signing (`operationMode` `A`, `signatures/signPolling`) against the emulator's
/// approvals: approve, decline, expire, a client restarted in the middle, an emulator restarted in
/// the middle.
@Suite("CSC asynchronous signing waits for the emulator's approvals")
struct CSCApprovalTests {
    /// Parameters of an asynchronous client of Leonid's PIN credential.
    func asynchronousParameters(
        _ url: URL,
        validityPeriod: Int = 600,
        approvalTimeout: Int = 60
    ) -> ProviderParameters {
        var parameters = cscParameters(url, credentialID: pinCredential, pin: StandardSeed.certificatePIN)
        parameters[CSCProvider.ParameterKey.operationMode] = .string("asynchronous")
        parameters[CSCProvider.ParameterKey.validityPeriod] = .integer(validityPeriod)
        parameters[CSCProvider.ParameterKey.approvalTimeout] = .integer(approvalTimeout)
        return parameters
    }

    let digest = DigestAlgorithm.sha256.hash(Array("Бюджетный план 2026\n".utf8))

    /// Starts an approval of ``digest`` (ECDSA, SHA-256) with `key`.
    func requestApproval(of key: any ApprovalSigningKey) async throws -> PendingRemoteSignature {
        try await key.requestSignatures(forDigests: [digest], digestAlgorithm: .sha256, scheme: .ecdsa)
    }

    @Test("approve: signHash answers a responseID, signPolling waits until the approval, then the values verify")
    func approve() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let key = try await approvalKey(asynchronousParameters(url))
            let operation = try await requestApproval(of: key)
            let signHash = try members(requests(emulator, "signatures/signHash").last)
            #expect(signHash["operationMode"] == "A" && signHash["validity_period"] == .integer(600_000))
            #expect(emulator.approvalState(of: operation.operationID) == .pending)
            #expect(try await key.status(of: operation) == .waiting)
            try emulator.approve(operationID: operation.operationID)
            guard case .signed(let values) = try await key.status(of: operation) else {
                Issue.record("the approved operation did not give signatures")
                return
            }
            #expect(values.count == 1)
            let certificate = sharedSeed.users[0].certificates[0].identity.certificate
            #expect(
                certificate.isValidSignature(values[0], forDigest: digest, digestAlgorithm: .sha256, scheme: .ecdsa)
            )
        }
    }

    @Test("decline: signPolling answers access_denied, the key throws approvalDeclined naming the operation")
    func decline() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let key = try await approvalKey(asynchronousParameters(url))
            let operation = try await requestApproval(of: key)
            try emulator.decline(operationID: operation.operationID)
            let error = await expectError(.approvalDeclined) { try await key.status(of: operation) }
            #expect(error?.reason.contains(operation.operationID) == true)
            expectError(.invalidParameter) { try emulator.approve(operationID: operation.operationID) }
        }
    }

    @Test("expiry: an operation nobody decided within its validity period expires; the key throws approvalExpired")
    func expire() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let key = try await approvalKey(asynchronousParameters(url, validityPeriod: 1))
            let operation = try await requestApproval(of: key)
            try await Task.sleep(for: .milliseconds(1100))
            #expect(emulator.approvalState(of: operation.operationID) == .expired)
            let error = await expectError(.approvalExpired) { try await key.status(of: operation) }
            #expect(error?.reason.contains(operation.operationID) == true)
        }
    }

    @Test("a wait timeout: signing throws timeout naming the operation, which still waits on the service")
    func timeout() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let directory = try TemporaryDirectory()
            let coordinator = try makeCoordinator(asynchronousParameters(url, approvalTimeout: 1), directory)
            let error = await expectError(.timeout) {
                try await coordinator.sign(document: .bytes(Array("x\n".utf8), name: "x.txt"), provider: .csc)
            }
            let id = try #require(emulator.approvalOperationIDs.last)
            #expect(error?.reason.contains(id) == true)
            #expect(emulator.approvalState(of: id) == .pending)
        }
    }

    @Test("auto-approve: the coordinator's ordinary sign waits, gets the signature, and openssl verifies the CAdES")
    func autoApprove() async throws {
        try await withEmulator(.init(autoApproveAfter: 0)) { emulator, url in
            let directory = try TemporaryDirectory()
            let coordinator = try makeCoordinator(asynchronousParameters(url), directory)
            let content = Array("Счёт № 7\n".utf8)
            let result = try await coordinator.sign(document: .bytes(content, name: "invoice.txt"), provider: .csc)
            try opensslVerify(result.signature, content: content)
            #expect(emulator.approvalOperationIDs.count == 1)
        }
    }

    @Test("a client restarted in the middle: a new provider resumes the operation from its JSON alone")
    func clientRestart() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let first = try await approvalKey(asynchronousParameters(url))
            let operation = try await requestApproval(of: first)
            let stored = try JSONEncoder().encode(operation)
            let resumed = try JSONDecoder().decode(PendingRemoteSignature.self, from: stored)
            #expect(resumed == operation)
            let second = try await approvalKey(asynchronousParameters(url))
            #expect(try await second.status(of: resumed) == .waiting)
            try emulator.approve(operationID: resumed.operationID)
            let values = try await second.waitForSignatures(resumed, timeout: .seconds(120))
            let certificate = sharedSeed.users[0].certificates[0].identity.certificate
            #expect(
                certificate.isValidSignature(values[0], forDigest: digest, digestAlgorithm: .sha256, scheme: .ecdsa)
            )
        }
    }

    @Test("an emulator restarted in the middle: with a state directory the operation and its approval survive")
    func emulatorRestart() async throws {
        let state = try TemporaryDirectory()
        let configuration = DSSEmulator.Configuration(stateDirectory: state.url.path)
        let operation = try await withEmulator(configuration) { _, url in
            try await requestApproval(of: approvalKey(asynchronousParameters(url)))
        }
        try await withEmulator(configuration) { emulator, url in
            #expect(emulator.approvalState(of: operation.operationID) == .pending)
            try emulator.approve(operationID: operation.operationID)
            let key = try await approvalKey(asynchronousParameters(url))
            guard case .signed(let values) = try await key.status(of: operation) else {
                Issue.record("the operation approved after the restart did not give signatures")
                return
            }
            #expect(values.count == 1)
        }
        let reopened = try DSSEmulator(configuration: configuration)
        #expect(reopened.approvalState(of: operation.operationID) == .approved)
    }

    @Test("bad asynchronous requests are refused before the SAD is used: operationMode X, validity_period 0")
    func badRequests() async throws {
        try await withEmulator(.faultsAndSecrets) { emulator, url in
            let client = makeClient(url)
            let sad = try await client.authorize(
                credentialID: scal2Credential,
                numSignatures: 1,
                hashes: [digest],
                hashAlgorithm: .sha256
            )
            let error = await expectError(.serverRejected) {
                try await client.signHashAsynchronously(
                    credentialID: scal2Credential,
                    sad: sad.sad,
                    hashes: [digest],
                    hashAlgorithm: .sha256,
                    signAlgorithm: "1.2.840.113549.1.1.11",
                    validity: 0
                )
            }
            #expect(error?.reason.contains("validity_period") == true)
            let polled = await expectError(.serverRejected) {
                try await client.signPolling(responseID: "op-unknown", count: 1)
            }
            #expect(polled?.reason.contains("op-unknown") == true)
            // The refused request did not use the SAD: a synchronous signHash still can.
            let values = try await client.signHash(
                credentialID: scal2Credential,
                sad: sad.sad,
                hashes: [digest],
                hashAlgorithm: .sha256,
                signAlgorithm: "1.2.840.113549.1.1.11"
            )
            #expect(values.count == 1)
        }
    }
}
