import CSCProvider
import CertificateProviders
import CertificateProvidersTesting
import EmulatorKit
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

/// CSC credential authorization that waits for the user (`credentials/authorize` answering 202 with a
/// handle, `credentials/authorizeCheck`) against the emulator's approvals: approve, decline, expire,
/// a client restarted in the middle.
@Suite("CSC credentials/authorizeCheck waits for the user's approval of the authorization")
struct CSCAuthorizationApprovalTests {
    /// An emulator whose implicit credentials (Leonid's SCAL 2 RSA key) wait `validity` seconds for
    /// the user's approval of each authorization.
    func waitingEmulator(validity: TimeInterval = 600) -> DSSEmulator.Configuration {
        .init(faultsEnabled: true, requestLogKeepsSecrets: true, authorizationApprovalValidity: validity)
    }

    let digest = DigestAlgorithm.sha256.hash(Array("Заявка на закупку № 41\n".utf8))
    let certificate = sharedSeed.users[0].certificates.first { String($0.id) == scal2Credential }!.identity.certificate
    let secretEnvironment = ["CSC_SECRET": StandardSeed.password]

    /// Expects one value, an RSA PKCS #1 v1.5 signature of ``digest`` by Leonid's SCAL 2 key.
    func expectSignedDigest(_ values: [[UInt8]], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            values.count == 1
                && certificate.isValidSignature(
                    values[0],
                    forDigest: digest,
                    digestAlgorithm: .sha256,
                    scheme: .rsaPKCS1v15
                ),
            sourceLocation: sourceLocation
        )
    }

    /// `certsign sign DOCUMENT` with Leonid's SCAL 2 credential, started in the background.
    func startSigning(_ url: URL, _ document: String, in work: TemporaryDirectory) throws -> BackgroundCertsign {
        try BackgroundCertsign(
            [
                "sign", document, "--provider", "csc", "--param", "url=\(url.absoluteString)", "--param",
                "clientID=Leonid", "--param-env", "clientSecret=CSC_SECRET", "--param",
                "credentialID=\(scal2Credential)",
            ],
            environment: secretEnvironment.merging(["CERTSIGN_HOME": work.path("store")]) { $1 },
            in: work,
            name: "sign"
        )
    }

    @Test("approve: certsign sign waits on authorizeCheck, the user approves, openssl verifies the signature")
    func approve() async throws {
        try await withEmulator(waitingEmulator()) { emulator, url in
            #expect(try await makeClient(url).info().methods.contains("credentials/authorizeCheck"))
            let work = try TemporaryDirectory()
            let document = try work.write("order.txt", text: "Заявка на закупку № 41\n")
            let signing = try startSigning(url, document, in: work)
            let store = try TemporaryDirectory()
            let (handle, before, written, approve) = try await decideFirstOperation(of: emulator) { handle in
                let before = emulator.approvalState(of: handle)
                let written = FileManager.default.fileExists(atPath: document + ".p7s")
                let approve = try CLI.run(["emulator", "approve", handle, "--url", url.absoluteString], store: store)
                return (handle, before, written, approve)
            }
            #expect(before == .pending && !written)
            #expect(approve.succeeded, "\(approve.errorOutput)")
            #expect(await signing.wait() == 0, "\(signing.errorText)")
            try opensslVerify(signatureFile: document + ".p7s", contentFile: document)
            let checks = try requests(emulator, "credentials/authorizeCheck").map { try members($0) }
            #expect(!checks.isEmpty && checks.allSatisfy { $0["handle"] == .string(handle) })
        }
    }

    @Test("decline: certsign sign exits 1 naming the authorization as declined and writes nothing")
    func decline() async throws {
        try await withEmulator(waitingEmulator()) { emulator, url in
            let work = try TemporaryDirectory()
            let document = try work.write("order.txt", text: "Заявка на закупку № 41\n")
            let signing = try startSigning(url, document, in: work)
            let handle = try await decideFirstOperation(of: emulator) { handle in
                try emulator.decline(operationID: handle)
                return handle
            }
            #expect(await signing.wait() == 1)
            #expect(
                signing.errorText.contains(handle) && signing.errorText.contains("declined"),
                "\(signing.errorText)"
            )
            #expect(!FileManager.default.fileExists(atPath: document + ".p7s"))
            // One authorization, and certsign asked about that one only.
            #expect(requests(emulator, "credentials/authorize").count == 1)
            #expect(emulator.approvalOperationIDs == [handle])
            let checks = try requests(emulator, "credentials/authorizeCheck").map { try members($0) }
            #expect(!checks.isEmpty && checks.allSatisfy { $0["handle"] == .string(handle) })
        }
    }

    @Test("a decline before the client's first authorizeCheck: that first check answers declined")
    func declineBeforeFirstCheck() async throws {
        try await withEmulator(waitingEmulator()) { emulator, url in
            let client = makeClient(url)
            let (started, handle) = try await startWaitingAuthorization(client, digest: digest)
            try emulator.decline(operationID: handle)
            let error = await expectError(.approvalDeclined) {
                try await client.waitForAuthorization(started, timeout: .seconds(120))
            }
            #expect(error?.reason.contains(handle) == true)
            #expect(requests(emulator, "credentials/authorizeCheck").count == 1)
            #expect(emulator.approvalOperationIDs == [handle])
            #expect(emulator.approvalState(of: handle) == .declined)
        }
    }

    @Test("an authorize whose answer is lost with its kept-alive connection: network error, sent once, nothing waits")
    func authorizeAnswerLost() async throws {
        try await withEmulator(waitingEmulator()) { emulator, url in
            let client = CSCClient(
                configuration: .init(
                    baseURL: url,
                    clientID: StandardSeed.username,
                    clientSecret: Secret(StandardSeed.password),
                    timeout: 10
                ),
                transport: DroppingAuthorizeAnswers()
            )
            // The token and the credential's info leave a kept-alive connection.
            _ = try await client.credentialInfo(scal2Credential)
            await expectError(.network) { try await startWaitingAuthorization(client, digest: digest) }
            #expect(requests(emulator, "credentials/authorize").count == 1)
            #expect(emulator.approvalOperationIDs.isEmpty)
        }
    }

    @Test("expiry: an authorization nobody approved in time: the key throws approvalExpired naming the handle")
    func expire() async throws {
        try await withEmulator(waitingEmulator(validity: 1)) { emulator, url in
            let identity = try await CSCProvider(parameters: cscParameters(url, credentialID: scal2Credential))
                .initialize(options: ProviderParameters())
            let error = await expectError(.approvalExpired) {
                try await identity.key.signature(forDigest: digest, digestAlgorithm: .sha256, scheme: .rsaPKCS1v15)
            }
            let handle = try #require(emulator.approvalOperationIDs.first)
            #expect(emulator.approvalState(of: handle) == .expired)
            #expect(error?.reason.contains(handle) == true)
            #expect(requests(emulator, "signatures/signHash").isEmpty)
        }
    }

    @Test("approvalTimeout bounds a synchronous signature's wait for the authorization: timeout naming the handle")
    func synchronousApprovalTimeout() async throws {
        try await withEmulator(waitingEmulator()) { emulator, url in
            var parameters = cscParameters(url, credentialID: scal2Credential)
            parameters[CSCProvider.ParameterKey.approvalTimeout] = .integer(1)
            let identity = try await CSCProvider(parameters: parameters).initialize(options: ProviderParameters())
            let started = ContinuousClock.now
            let error = await expectError(.timeout) {
                try await identity.key.signature(forDigest: digest, digestAlgorithm: .sha256, scheme: .rsaPKCS1v15)
            }
            // The default wait is 300 s; the parameter makes it 1 s (the bound leaves room for a loaded run).
            #expect(ContinuousClock.now - started < .seconds(120))
            let handle = try #require(emulator.approvalOperationIDs.first)
            #expect(emulator.approvalState(of: handle) == .pending)
            #expect(error?.reason.contains(handle) == true)
            #expect(requests(emulator, "signatures/signHash").isEmpty)
        }
    }

    @Test("a client restarted in the middle: a new client asks about the same handle and gets the SAD")
    func clientRestart() async throws {
        try await withEmulator(waitingEmulator()) { emulator, url in
            let (started, handle) = try await startWaitingAuthorization(makeClient(url), digest: digest)
            let second = makeClient(url)
            guard case .pending = try await second.authorizeCheck(handle: handle) else {
                Issue.record("an authorization nobody approved gave a SAD")
                return
            }
            try emulator.approve(operationID: handle)
            let authorization = try await second.waitForAuthorization(started, timeout: .seconds(120))
            guard case .authorized(let again) = try await second.authorizeCheck(handle: handle) else {
                Issue.record("an approved authorization went back to pending")
                return
            }
            #expect(again.sad == authorization.sad)
            let values = try await second.signHash(
                credentialID: scal2Credential,
                sad: authorization.sad,
                hashes: [digest],
                hashAlgorithm: .sha256,
                signAlgorithm: "1.2.840.113549.1.1.11"
            )
            expectSignedDigest(values)
            let unknown = await expectError(.serverRejected) { try await second.authorizeCheck(handle: "op-unknown") }
            #expect(unknown?.reason.contains("op-unknown") == true)
        }
    }

    @Test("asynchronous mode: the pending authorization is the operation, resumed by a new provider from its JSON")
    func asynchronousResume() async throws {
        try await withEmulator(waitingEmulator()) { emulator, url in
            var parameters = cscParameters(url, credentialID: scal2Credential)
            parameters[CSCProvider.ParameterKey.operationMode] = .string("asynchronous")
            let first = try await approvalKey(parameters)
            let operation = try await first.requestSignatures(
                forDigests: [digest],
                digestAlgorithm: .sha256,
                scheme: .rsaPKCS1v15
            )
            let handle = try #require(emulator.approvalOperationIDs.first)
            #expect(operation.operationID == CSCSigningKey.authorizationOperationPrefix + handle)
            let resumed = try JSONDecoder().decode(
                PendingRemoteSignature.self,
                from: try JSONEncoder().encode(operation)
            )
            let second = try await approvalKey(parameters)
            #expect(try await second.status(of: resumed) == .waiting)
            try emulator.approve(operationID: handle)
            let values = try await second.waitForSignatures(resumed, timeout: .seconds(120))
            expectSignedDigest(values)
        }
    }
}

/// Forwards every request to libcurl, and asks the emulator to close the connection of each
/// `credentials/authorize` without answering (a service or proxy that lost the connection).
private struct DroppingAuthorizeAnswers: HTTPTransport {
    let next = CurlTransport()

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        if request.url.path.hasSuffix("/credentials/authorize") {
            request.setHeader(DSSEmulator.Fault.headerName, DSSEmulator.Fault.drop.headerValue)
        }
        return try await next.send(request)
    }
}
