package import CertificateProviders
import Synchronization

/// What a remote provider changes, under one lock: its parameters, the identity of its last
/// `initialize(options:)` and what it keeps besides (`Kept`: a session, the last envelope; `Void` for
/// nothing), beside the ``RemoteProviderBase`` that does not change.
///
/// A provider holds one as `remote`, conforms to ``RemoteProvider`` and answers `parameters`,
/// `setParameters(_:)` and the stored identity from it.
package final class RemoteProviderState<Kept: Sendable>: Sendable {
    /// The values under the lock.
    package struct Value: Sendable {
        /// The current parameters (checked against the schema).
        package var parameters: ProviderParameters
        /// The identity of the last `initialize(options:)`, until forgotten.
        package var identity: SigningIdentity?
        /// What the provider keeps besides.
        package var kept: Kept
    }

    /// The schema, transport, headers, TLS identity lookup and warning callback.
    package let base: RemoteProviderBase
    private let value: Mutex<Value>

    /// Creates the state with `parameters` checked against the base's schema.
    /// - Throws: `.invalidParameter` naming an unknown key or a value of the wrong type.
    package init(base: RemoteProviderBase, parameters: ProviderParameters, kept: Kept) throws {
        self.base = base
        value = Mutex(Value(parameters: try base.validate(parameters), identity: nil, kept: kept))
    }

    /// Runs `body` with the values under the lock.
    package func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try value.withLock(body)
    }

    /// The current parameters.
    package var parameters: ProviderParameters { value.withLock { $0.parameters } }

    /// The identity of the last `initialize(options:)`, or nil.
    package var identity: SigningIdentity? { value.withLock { $0.identity } }

    /// What the provider keeps besides.
    package var kept: Kept { value.withLock { $0.kept } }

    /// The current parameters with `options` over them, checked against the schema (what
    /// `initialize(options:)` and the other calls with options work with).
    /// - Throws: `.invalidParameter` naming the key.
    package func merged(_ options: ProviderParameters) throws -> ProviderParameters {
        try base.validate(parameters.merging(options))
    }

    /// Replaces the parameters (checked against the schema) and, under the same lock, lets `changed`
    /// drop what they no longer serve (a provider's ``RemoteProvider/parametersChanged(_:)``).
    /// - Throws: `.invalidParameter` naming an unknown key or a value of the wrong type.
    package func setParameters(_ parameters: ProviderParameters, _ changed: (inout Value) -> Void) throws {
        let parameters = try base.validate(parameters)
        value.withLock {
            $0.parameters = parameters
            changed(&$0)
        }
    }

    /// Keeps `identity` as the last one made and returns it.
    @discardableResult
    package func remember(_ identity: SigningIdentity) -> SigningIdentity {
        value.withLock { $0.identity = identity }
        return identity
    }

    /// Forgets the identity (no-op when there is none).
    package func forgetIdentity() {
        value.withLock { $0.identity = nil }
    }
}
