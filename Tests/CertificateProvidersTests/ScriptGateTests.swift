import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Synchronization
import Testing

@Suite("ScriptGate: a scripted call waits until the test releases it")
struct ScriptGateTests {
    let identity: SigningIdentity
    init() throws { identity = try TestPKI().issueLeaf(subject: "CN=Gated", keyType: .p256) }

    @Test("an async call parks at the gate and finishes only after release(); later calls pass straight through")
    func release() async throws {
        let provider = ScriptedCertificateProvider(identity: identity)
        let gate = ScriptGate()
        provider.script(.initialize, .waitFor(gate, then: .succeed))
        let finished = Mutex(false)
        let call = Task {
            let made = try await provider.initialize(options: [:])
            finished.withLock { $0 = true }
            return made
        }
        await gate.waitForArrivals(1)
        #expect(provider.calls == [.initialize])
        #expect(!finished.withLock { $0 }, "the call went on before the release")
        #expect(try provider.storedCertificate() == nil)
        gate.release()
        #expect(try await call.value.certificate == identity.certificate)
        #expect(finished.withLock { $0 })
        _ = try await provider.initialize(options: [:])
        #expect(gate.arrivals == 2 && gate.isReleased)
    }

    @Test("a call cancelled while it waits ends with CancellationError; the gate stays closed for others")
    func cancellation() async throws {
        let provider = ScriptedCertificateProvider(identity: identity)
        let gate = ScriptGate()
        provider.script(.signatures, .waitFor(gate, then: .succeed))
        let call = Task { try await provider.signatures() }
        await gate.waitForArrivals(1)
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(!gate.isReleased)
    }

    @Test("a synchronous call blocks its thread until the release, then behaves as scripted")
    func synchronous() async throws {
        let provider = ScriptedCertificateProvider(identity: identity)
        let gate = ScriptGate()
        provider.script(.deleteStoredCertificate, .waitFor(gate, then: .fail(CertificateProviderError(.network, "x"))))
        let call = Task.detached { try provider.deleteStoredCertificate() }
        await gate.waitForArrivals(1)
        gate.release()
        await #expect(throws: CertificateProviderError(.network, "x")) { try await call.value }
    }
}
