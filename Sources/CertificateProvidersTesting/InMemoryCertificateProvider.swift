public import CertificateProviders
import Synchronization

/// A provider that keeps its identity in memory and honours the whole SAP contract: the double
/// apps register in place of a real provider in their tests.
///
/// `initialize(options:)` obtains an identity from the `source` closure (which sees the merged
/// parameters) and stores it; `storedCertificate()` returns it without calling `source`;
/// `deleteStoredCertificate()` forgets it and succeeds when nothing is stored. Parameters named in
/// `requiredParameters` must be present for `initialize`; `setParameters` rejects keys outside
/// `acceptedParameters` (when given) with `.invalidParameter` naming the key.
///
/// ```swift
/// extension ProviderID {
///     static let testSigner: ProviderID = "com.example.test-signer"
/// }
///
/// var registry = ProviderRegistry()
/// let pki = try TestPKI()
/// let identity = try pki.issueLeaf(subject: "CN=Test Signer")
/// try registry.register(.testSigner, description: "in-memory stand-in") {
///     InMemoryCertificateProvider(id: .testSigner, identity: identity)
/// }
/// ```
public final class InMemoryCertificateProvider: CertificateProvider {
    /// Produces an identity from the merged parameters.
    public typealias IdentitySource = @Sendable (ProviderParameters) async throws -> SigningIdentity

    private struct State {
        var stored: SigningIdentity?
        var parameters: ProviderParameters
        var initializeCount = 0
    }

    /// The ID given at creation.
    public let providerID: ProviderID
    private let source: IdentitySource
    private let acceptedParameters: Set<ProviderParameters.Key>?
    private let requiredParameters: Set<ProviderParameters.Key>
    private let state: Mutex<State>

    /// Creates a provider whose `initialize` calls `source`.
    /// - Parameters:
    ///   - id: the provider ID to report.
    ///   - parameters: initial parameters.
    ///   - acceptedParameters: keys `setParameters` and `initialize` accept; nil accepts any.
    ///   - requiredParameters: keys that must be present (after merging) for `initialize`.
    ///   - stored: an identity that is stored from the start.
    ///   - source: makes the identity on `initialize`.
    public init(
        id: ProviderID = "test.in-memory",
        parameters: ProviderParameters = ProviderParameters(),
        acceptedParameters: Set<ProviderParameters.Key>? = nil,
        requiredParameters: Set<ProviderParameters.Key> = [],
        stored: SigningIdentity? = nil,
        source: @escaping IdentitySource
    ) {
        self.providerID = id
        self.source = source
        self.acceptedParameters = acceptedParameters
        self.requiredParameters = requiredParameters
        self.state = Mutex(State(stored: stored, parameters: parameters))
    }

    /// Creates a provider whose `initialize` always yields `identity`.
    public convenience init(id: ProviderID = "test.in-memory", identity: SigningIdentity, storedFromStart: Bool = false)
    {
        self.init(id: id, stored: storedFromStart ? identity : nil, source: { _ in identity })
    }

    /// How many times `initialize` succeeded.
    public var initializeCount: Int { state.withLock { $0.initializeCount } }

    /// Checks the options against the accepted keys, merges them into the parameters and returns the identity.
    public func initialize(options: ProviderParameters) async throws -> SigningIdentity {
        try validate(options)
        let merged = state.withLock { $0.parameters.merging(options) }
        for key in requiredParameters.sorted() where merged[key] == nil {
            throw CertificateProviderError.invalidParameter(
                "parameter '\(key)' is required by provider '\(providerID)'"
            )
        }
        let identity = try await source(merged)
        state.withLock {
            $0.stored = identity
            $0.parameters = merged
            $0.initializeCount += 1
        }
        return identity
    }

    /// The stored identity, or nil after deletion.
    public func storedCertificate() throws -> SigningIdentity? {
        state.withLock { $0.stored }
    }

    /// Forgets the stored identity.
    public func deleteStoredCertificate() throws {
        state.withLock { $0.stored = nil }
    }

    /// The parameters last set.
    public var parameters: ProviderParameters { state.withLock { $0.parameters } }

    /// Replaces the parameters.
    public func setParameters(_ parameters: ProviderParameters) throws {
        try validate(parameters)
        state.withLock { $0.parameters = parameters }
    }

    private func validate(_ parameters: ProviderParameters) throws {
        guard let acceptedParameters else { return }
        for key in parameters.keys where !acceptedParameters.contains(key) {
            throw CertificateProviderError.invalidParameter(
                "provider '\(providerID)' does not accept parameter '\(key)'"
            )
        }
    }
}
