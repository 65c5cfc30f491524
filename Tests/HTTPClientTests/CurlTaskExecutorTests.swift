import CertificateProviders
import EmulatorKit
import FMPDSSProvider
import Foundation
import HTTPClient
import TestSupport
import Testing

/// The name of the thread this runs on (a synchronous function: `Thread.current` is not for async code).
private func currentThreadName() -> String? { Thread.current.name }

private func fmpClient(_ base: URL, _ transport: CurlTransport) -> FMPClient {
    seedClient(base, transport, device: "executor-test")
}

private func request(_ base: URL, fault: String? = nil, timeout: TimeInterval = 10) throws -> HTTPRequest {
    var request = HTTPRequest(url: try #require(URL(string: base.absoluteString + "api/v1/nothing/")), timeout: timeout)
    if let fault { request.setHeader(DSSEmulator.Fault.headerName, fault) }
    return request
}

@Suite("CurlTransport.taskExecutor: tasks that run on the transport's own thread")
struct CurlTaskExecutorTests {
    @Test("FMP client calls under the preference work, one after another and 8 at once, and continue on that thread")
    func clientCalls() async throws {
        try await withEmulator { _, base in
            let transport = CurlTransport()
            let client = fmpClient(base, transport)
            try await withTaskExecutorPreference(transport.taskExecutor) {
                _ = try await client.auth(username: StandardSeed.username, password: Secret(StandardSeed.password))
                #expect(currentThreadName() == "CurlTransport")
                let signed = try await signSeedSample(client)
                #expect(signed.value == StandardSeed.firstSignatureID)
                #expect(currentThreadName() == "CurlTransport")
                for _ in 0..<5 {
                    let signs = try await client.signs().value
                    #expect(signs.map(\.id) == [StandardSeed.firstSignatureID])
                    #expect(signs.first?.table == StandardSeed.table)
                }
                #expect(currentThreadName() == "CurlTransport")
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            var done = 0
                            for _ in 0..<10 {
                                _ = try await client.signs()
                                done += 1
                            }
                            #expect(currentThreadName() == "CurlTransport")
                            return done
                        }
                    }
                    let total = try await group.reduce(0, +)
                    #expect(total == 80)
                }
            }
            // Without the preference, the same client goes on working from the shared pool.
            _ = try await client.signs()
            #expect(currentThreadName() != "CurlTransport")
        }
    }

    @Test("under the preference: cancellation aborts a slow transfer, timeouts fire, the transport goes on")
    func cancellationAndTimeout() async throws {
        try await withEmulator(.init(faultsEnabled: true)) { _, base in
            let transport = CurlTransport()
            try await withTaskExecutorPreference(transport.taskExecutor) {
                let slow = Task(executorPreference: transport.taskExecutor) {
                    try await transport.send(try request(base, fault: "delay=5000", timeout: 30))
                }
                try await Task.sleep(for: .milliseconds(200))
                slow.cancel()
                await expectError(.cancelled, as: HTTPClientError.self) { try await slow.value }
                await expectError(.timeout, as: HTTPClientError.self) {
                    try await transport.send(try request(base, fault: "delay=3000", timeout: 0.5))
                }
                #expect(try await transport.send(try request(base)).status == 404)
            }
        }
    }

    @Test("a task that still prefers the executor after its transport is released goes on, on the shared pool")
    func executorOutlivesTransport() async throws {
        try await withEmulator { _, base in
            var transport: CurlTransport? = CurlTransport()
            let executor = try #require(transport?.taskExecutor)
            let status = try await withTaskExecutorPreference(executor) {
                let status = try await transport?.send(try request(base)).status
                transport = nil  // its loop thread stops; later jobs of this task run elsewhere
                try await Task.sleep(for: .milliseconds(20))
                #expect(currentThreadName() != "CurlTransport")
                return status
            }
            #expect(status == 404)
        }
    }

    @Test("releasing the transport frees its executor and loop (no reference cycle left behind)")
    func noCycle() async throws {
        try await withEmulator { _, base in
            weak var executor: AnyObject?
            do {
                let transport = CurlTransport()
                executor = transport.taskExecutor as AnyObject
                let status = try await withTaskExecutorPreference(transport.taskExecutor) {
                    try await transport.send(try request(base)).status
                }
                #expect(status == 404)
                #expect(executor != nil)
            }
            // The transport's deinit waited for its loop thread to end, which let go of the executor.
            #expect(executor == nil)
        }
    }
}
