public import CertificateProviders
import Synchronization

/// What a remote provider changes, under one lock: its parameters, the identity of its last
/// `initialize(options:)` and what it keeps besides (`Kept`: a session, the last envelope; `Void` for
/// nothing), beside the ``RemoteProviderBase`` that does not change.
///
/// A provider holds one as `remote` and conforms to ``RemoteProvider``, which makes it the provider's
/// `heldState`: `parameters`, `setParameters(_:)`, `storedCertificate()` and
/// `deleteStoredCertificate()` answer from it unless the provider declares its own (a provider that
/// keeps identities on disk answers `storedCertificate()` itself).
public final class RemoteProviderState<Kept: Sendable>: CertificateProviderState {
    /// The values under the lock.
    public struct Value: Sendable {
        /// The current parameters (checked against the schema).
        public var parameters: ProviderParameters
        /// The identity of the last `initialize(options:)`, until forgotten.
        public var identity: SigningIdentity?
        /// What the provider keeps besides.
        public var kept: Kept
    }

    /// The schema, transport, headers, TLS identity lookup and warning callback.
    public let base: RemoteProviderBase
    private let value: Mutex<Value>
    private let parametersChanged: @Sendable (inout Value) -> Void

    /// Creates the state with `parameters` checked against the base's schema.
    /// - Parameter parametersChanged: drops, under the lock, what new parameters no longer serve when
    ///   ``setParameters(_:)`` replaces them (the provider's ``RemoteProvider/parametersChanged(_:)``;
    ///   default: forgets the identity).
    /// - Throws: `.invalidParameter` naming an unknown key or a value of the wrong type.
    public init(
        base: RemoteProviderBase,
        parameters: ProviderParameters,
        kept: Kept,
        parametersChanged: @escaping @Sendable (inout Value) -> Void = { $0.identity = nil }
    ) throws {
        self.base = base
        self.parametersChanged = parametersChanged
        value = Mutex(Value(parameters: try base.validate(parameters), identity: nil, kept: kept))
    }

    /// Runs `body` with the values under the lock.
    public func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try value.withLock(body)
    }

    /// The current parameters.
    public var parameters: ProviderParameters { value.withLock { $0.parameters } }

    /// The identity of the last `initialize(options:)`, or nil.
    public var identity: SigningIdentity? { value.withLock { $0.identity } }

    /// What the provider keeps besides.
    public var kept: Kept { value.withLock { $0.kept } }

    /// The current parameters with `options` over them, checked against the schema (what
    /// `initialize(options:)` and the other calls with options work with).
    /// - Throws: `.invalidParameter` naming the key.
    public func merged(_ options: ProviderParameters) throws -> ProviderParameters {
        try base.validate(parameters.merging(options))
    }

    /// Replaces the parameters (checked against the schema) and, under the same lock, drops what they
    /// no longer serve (the `parametersChanged` the state was made with).
    /// - Throws: `.invalidParameter` naming an unknown key or a value of the wrong type; the previous
    ///   parameters stay in force.
    public func setParameters(_ parameters: ProviderParameters) throws {
        let parameters = try base.validate(parameters)
        value.withLock {
            $0.parameters = parameters
            parametersChanged(&$0)
        }
    }

    /// The identity of the last `initialize(options:)` (kept in memory only), or nil.
    public func storedCertificate() throws -> SigningIdentity? { identity }

    /// Forgets the identity (no-op when there is none).
    public func deleteStoredCertificate() throws { forgetIdentity() }

    /// Keeps `identity` as the last one made and returns it.
    @discardableResult
    public func remember(_ identity: SigningIdentity) -> SigningIdentity {
        value.withLock { $0.identity = identity }
        return identity
    }

    /// Forgets the identity (no-op when there is none).
    public func forgetIdentity() {
        value.withLock { $0.identity = nil }
    }
}
