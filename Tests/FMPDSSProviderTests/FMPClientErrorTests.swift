import CertificateProviders
import EmulatorKit
import FMPDSSProvider
import Foundation
import HTTPClient
import JSON
import TestSupport
import Testing

@Suite("FMPClient: every error path over real HTTP")
struct FMPClientErrorTests {
    @Test(
        "status-500, malformed-json and drop on sign → .network, and the sign request is sent exactly once",
        arguments: ["status-500", "malformed-json", "drop"]
    )
    func signFaults(fault: String) async throws {
        try await withEmulator(.init(faultsEnabled: true)) { emulator, url in
            let clean = try await loggedInClient(url)
            let session = try #require(await clean.exportSession())
            let client = FMPClient(
                configuration: FMPClient.Configuration(session: session).withAdditionalHeaders([
                    (DSSEmulator.Fault.headerName, fault)
                ])
            )
            try await client.importSession(session)
            emulator.clearReceivedRequests()
            await expectError(.network) { try await signSample(client) }
            #expect(requests(emulator, endingWith: "/sign/").count == 1)
            #expect(emulator.storedSignatureIDs.isEmpty)
        }
    }

    @Test(
        "a sign that outlives the timeout → .timeout before the server answers; not resent, and the server still signs once"
    )
    func signTimeout() async throws {
        try await withEmulator(.init(faultsEnabled: true)) { emulator, url in
            let clean = try await loggedInClient(url)
            let session = try #require(await clean.exportSession())
            let client = FMPClient(
                configuration: FMPClient.Configuration(
                    session: session,
                    timeout: 1
                ).withAdditionalHeaders([(DSSEmulator.Fault.headerName, "delay=3000")])
            )
            try await client.importSession(session)
            emulator.clearReceivedRequests()
            // The delayed answer would be a success: `.timeout` proves the client's 1 s deadline fired
            // before it (no wall-clock assertion, which a busy test machine would make flaky). 1 s, not
            // less: under AddressSanitizer the request must still reach the server before the deadline.
            await expectError(.timeout) { try await signSample(client) }
            // A busy server may log the request after the client gave up: wait for it, then check
            // that it came once.
            for _ in 0..<100 where requests(emulator, endingWith: "/sign/").isEmpty {
                try await Task.sleep(for: .milliseconds(50))
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(requests(emulator, endingWith: "/sign/").count == 1)
            // The server finishes the delayed request and signs exactly once.
            var waited = 0
            while emulator.storedSignatureIDs.isEmpty && waited < 200 {
                try await Task.sleep(nanoseconds: 50_000_000)
                waited += 1
            }
            #expect(emulator.storedSignatureIDs == [121])
        }
    }

    @Test("a GET that meets dropped connections is retried by the policy, then fails with .network")
    func signsDropRetried() async throws {
        try await withEmulator(.init(faultsEnabled: true)) { emulator, url in
            let clean = try await loggedInClient(url)
            let session = try #require(await clean.exportSession())
            let policy = RetryPolicy(maxAttempts: 3, initialBackoff: 0.01)
            let client = FMPClient(
                configuration: FMPClient.Configuration(
                    session: session,
                    retryPolicy: policy
                ).withAdditionalHeaders([(DSSEmulator.Fault.headerName, "drop")])
            )
            try await client.importSession(session)
            emulator.clearReceivedRequests()
            await expectError(.network) { try await client.signs() }
            #expect(routeLog(emulator) == ["signs", "signs", "signs"])
        }
    }

    @Test("signs with malformed JSON → .network; with status 500 → .network carrying the server's code")
    func signsFaults() async throws {
        try await withEmulator(.init(faultsEnabled: true)) { _, url in
            let clean = try await loggedInClient(url)
            let session = try #require(await clean.exportSession())
            for fault in ["malformed-json", "status-500"] {
                let client = FMPClient(
                    configuration: FMPClient.Configuration(session: session).withAdditionalHeaders([
                        (DSSEmulator.Fault.headerName, fault)
                    ])
                )
                try await client.importSession(session)
                let error = await expectError(.network) { try await client.signs() }
                if fault == "status-500" { #expect(error?.reason.contains("internal_error") == true) }
            }
        }
    }

    @Test("wrong DSS password and wrong PIN → .wrongPassword; unknown certificate and cell → .serverRejected")
    func refusals() async throws {
        try await withEmulator { emulator, url in
            let client = try await loggedInClient(url)
            // The seed's cell signed with the seed's DSS password, but this resource, certificate and PIN.
            func sign(resource: String = StandardSeed.resource, certificateID: Int, pin: String?) async throws {
                _ = try await client.sign(
                    resource: resource,
                    table: StandardSeed.table,
                    column: StandardSeed.column,
                    hhiveID: 1,
                    dssPassword: Secret(StandardSeed.dssPassword),
                    certificateID: certificateID,
                    certificatePIN: pin.map { Secret($0) }
                )
            }
            await expectError(.wrongPassword) { try await client.certificates(dssPassword: Secret("nope")) }
            #expect(await client.lastEnvelope?.errors.first?.code == "wrong_dss_password")
            #expect(await client.lastEnvelope?.http.status == 403)
            await expectError(.wrongPassword) {
                try await sign(certificateID: 12831, pin: "999")
            }
            #expect(await client.lastEnvelope?.errors.first?.code == "wrong_pin")
            let unknown = await expectError(.serverRejected) {
                try await sign(certificateID: 99999, pin: nil)
            }
            #expect(unknown?.reason.contains("certificate_not_found") == true)
            await expectError(.serverRejected) {
                try await sign(resource: "NoSuchResource", certificateID: 12832, pin: nil)
            }
            await expectError(.invalidParameter) {
                try await client.sign(
                    resource: StandardSeed.resource,
                    table: StandardSeed.table,
                    params: [1, 2],
                    column: StandardSeed.column,
                    hhiveID: 1,
                    dssPassword: Secret(StandardSeed.dssPassword),
                    certificateID: 12831,
                    certificatePIN: nil
                )
            }
            await expectError(.notStored) { try await client.removeSign(id: 4242) }
            #expect(emulator.storedSignatureIDs.isEmpty)
            // The certificate without a PIN signs without one.
            #expect(
                try await client.sign(
                    resource: StandardSeed.resource,
                    table: StandardSeed.table,
                    column: StandardSeed.column,
                    hhiveID: 1,
                    dssPassword: Secret(StandardSeed.dssPassword),
                    certificateID: 12832,
                    certificatePIN: nil
                ).value == 121
            )
        }
    }

    @Test("a wrong login → .authenticationFailed; calls before login → .authenticationFailed without a request")
    func loginFailures() async throws {
        try await withEmulator { emulator, url in
            let client = makeClient(url)
            await expectError(.authenticationFailed) { try await client.signs() }
            #expect(emulator.receivedRequests.isEmpty)
            let error = await expectError(.authenticationFailed) {
                try await client.auth(username: "Leonid", password: Secret("s3cr3t-XYZ"))
            }
            #expect(error?.reason.contains("s3cr3t-XYZ") == false, "the reason must not echo the password")
            #expect(error.map { "\($0)" }?.contains("s3cr3t-XYZ") == false)
            #expect(await client.lastEnvelope?.status == "error")
        }
    }

    @Test("a refused connection → .network; http:// to a non-loopback host is refused before sending")
    func networkAndPolicy() async throws {
        let emulator = try DSSEmulator(seed: sharedSeed)
        let url = try emulator.start()
        emulator.stop()
        let client = makeClient(url, retryPolicy: .never)
        await expectError(.network) { try await client.auth(username: "Leonid", password: Secret("123123")) }

        let remote = FMPClient(
            configuration: .init(
                host: try #require(URL(string: "http://testmasterfmp.fsight.cloud/")),
                environment: "E",
                project: "P",
                device: "D"
            )
        )
        let refused = await expectError(.invalidParameter) {
            try await remote.auth(username: "Leonid", password: Secret("123123"))
        }
        #expect(refused?.reason.contains("http://") == true)
    }
}
