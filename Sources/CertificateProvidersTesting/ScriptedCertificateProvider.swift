public import CertificateProviders
import Foundation
import Synchronization

/// A provider whose every call can be told to succeed, fail or wait first, and which records the
/// calls it received: for testing code that *uses* providers (coordinators, CLIs, apps) against
/// failures that a real provider only shows now and then.
///
/// ```swift
/// let provider = ScriptedCertificateProvider(identity: identity)
/// provider.script(.initialize, .fail(CertificateProviderError(.network, "offline")))
/// provider.script(.storedCertificate, .delay(.milliseconds(50), then: .succeed))
/// provider.script(.signatures, .waitFor(gate, then: .succeed))   // until the test calls gate.release()
/// ```
public final class ScriptedCertificateProvider: CertificateProvider, SignatureHistoryProviding {
    /// The calls that can be scripted.
    public enum Operation: String, Sendable, CaseIterable {
        case initialize, storedCertificate, deleteStoredCertificate, parameters, setParameters, signatures,
            removeSignature
    }

    /// What a call does.
    public indirect enum Behavior: Sendable {
        /// Behave like an in-memory provider.
        case succeed
        /// Throw this error.
        case fail(CertificateProviderError)
        /// Wait, then behave as told. Async calls wait with `Task.sleep` (and so honour
        /// cancellation); synchronous calls block the thread.
        case delay(Duration, then: Behavior)
        /// Wait until the test releases `gate` (``ScriptGate/release()``), then behave as told. Async
        /// calls end with `CancellationError` when cancelled while waiting; synchronous calls block
        /// the thread.
        case waitFor(ScriptGate, then: Behavior)
    }

    private struct State {
        var behaviors: [Operation: [Behavior]] = [:]
        var calls: [Operation] = []
        var stored: SigningIdentity?
        var parameters = ProviderParameters()
        var history: [RemoteSignatureRecord] = []
    }

    /// The ID given at creation.
    public let providerID: ProviderID
    private let identity: SigningIdentity
    private let state: Mutex<State>

    /// Creates a provider that hands out `identity` when its script says succeed.
    public init(id: ProviderID = "test.scripted", identity: SigningIdentity, history: [RemoteSignatureRecord] = []) {
        self.providerID = id
        self.identity = identity
        var initial = State()
        initial.history = history
        self.state = Mutex(initial)
    }

    /// Queues behaviours for the next calls of `operation`, in order; once the queue is empty the
    /// last queued behaviour repeats (initially `.succeed`).
    public func script(_ operation: Operation, _ behaviors: Behavior...) {
        state.withLock { $0.behaviors[operation, default: []].append(contentsOf: behaviors) }
    }

    /// The calls received so far, in order.
    public var calls: [Operation] { state.withLock { $0.calls } }

    private func next(_ operation: Operation) -> Behavior {
        state.withLock { state in
            state.calls.append(operation)
            guard var queue = state.behaviors[operation], let first = queue.first else { return .succeed }
            if queue.count > 1 { queue.removeFirst() }
            state.behaviors[operation] = queue
            return first
        }
    }

    private func perform<R>(_ behavior: Behavior, _ body: () throws -> R) async throws -> R {
        switch behavior {
        case .succeed: return try body()
        case .fail(let error): throw error
        case .delay(let duration, let then):
            try await Task.sleep(for: duration)
            return try await perform(then, body)
        case .waitFor(let gate, let then):
            try await gate.pass()
            return try await perform(then, body)
        }
    }

    private func performSync<R>(_ behavior: Behavior, _ body: () throws -> R) throws -> R {
        switch behavior {
        case .succeed: return try body()
        case .fail(let error): throw error
        case .delay(let duration, let then):
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            Thread.sleep(forTimeInterval: seconds)
            return try performSync(then, body)
        case .waitFor(let gate, let then):
            gate.passBlocking()
            return try performSync(then, body)
        }
    }

    /// Plays the script's next step for `initialize`.
    public func initialize(options: ProviderParameters) async throws -> SigningIdentity {
        try await perform(next(.initialize)) {
            state.withLock {
                $0.stored = identity
                $0.parameters = $0.parameters.merging(options)
            }
            return identity
        }
    }

    /// Plays the script's next step for `storedCertificate`.
    public func storedCertificate() throws -> SigningIdentity? {
        try performSync(next(.storedCertificate)) { state.withLock { $0.stored } }
    }

    /// Plays the script's next step for `deleteStoredCertificate`.
    public func deleteStoredCertificate() throws {
        try performSync(next(.deleteStoredCertificate)) { state.withLock { $0.stored = nil } }
    }

    /// The parameters; a scripted failure of `.parameters` cannot throw here, so it returns empty.
    public var parameters: ProviderParameters {
        (try? performSync(next(.parameters)) { state.withLock { $0.parameters } }) ?? ProviderParameters()
    }

    /// Plays the script's next step for `setParameters`.
    public func setParameters(_ parameters: ProviderParameters) throws {
        try performSync(next(.setParameters)) { state.withLock { $0.parameters = parameters } }
    }

    /// Plays the script's next step for `signatures`: the signatures recorded so far.
    public func signatures() async throws -> [RemoteSignatureRecord] {
        try await perform(next(.signatures)) { state.withLock { $0.history } }
    }

    /// Plays the script's next step for `removeSignature`: removes the recorded signature.
    public func removeSignature(id: String) async throws {
        try await perform(next(.removeSignature)) {
            try state.withLock { state in
                guard let index = state.history.firstIndex(where: { $0.id == id }) else {
                    throw CertificateProviderError(.notStored, "no signature with id \(id) on the server")
                }
                state.history.remove(at: index)
            }
        }
    }
}
