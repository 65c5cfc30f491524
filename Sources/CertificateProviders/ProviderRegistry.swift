/// The providers an app can use, by ID: SAP's "default init for dynamic instantiation" in Swift.
///
/// A value, not a singleton: the app (or a test) creates one, registers what it wants, and passes it
/// to whoever needs providers. Swapping a provider in tests means registering a test double under
/// the same ID in the test's own registry.
public struct ProviderRegistry: Sendable {
    /// Makes a fresh provider instance.
    public typealias Factory = @Sendable () throws -> any CertificateProvider

    /// One registered provider.
    public struct Registration: Sendable {
        /// The ID it is registered under.
        public let id: ProviderID
        /// A one-line description shown by `certsign providers`.
        public let description: String
        /// The parameters the provider declares (`certsign providers --params ID` prints them); nil
        /// for a provider registered without one.
        public let schema: ProviderParameterSchema?
        let factory: Factory
    }

    private var registrations: [ProviderID: Registration] = [:]

    /// Creates an empty registry.
    public init() {}

    /// Registers a provider factory under an ID.
    ///
    /// - Parameters:
    ///   - id: the provider ID; reverse-DNS for third-party providers.
    ///   - description: one line saying what the provider is.
    ///   - factory: makes a new provider; called by ``makeProvider(_:)``.
    /// - Throws: `.providerAlreadyRegistered` when `id` is taken (there is no silent replace).
    public mutating func register(_ id: ProviderID, description: String, factory: @escaping Factory) throws {
        try register(id, description: description, schema: nil, factory: factory)
    }

    /// Registers a provider factory with the provider's parameter schema: what a provider's own
    /// `register(in:)` calls.
    ///
    /// - Parameters:
    ///   - id: the provider ID; reverse-DNS for third-party providers.
    ///   - description: one line saying what the provider is.
    ///   - schema: the parameters the provider declares; nil when it declares none.
    ///   - factory: makes a new provider; called by ``makeProvider(_:)``.
    /// - Throws: `.providerAlreadyRegistered` when `id` is taken (there is no silent replace).
    public mutating func register(
        _ id: ProviderID,
        description: String,
        schema: ProviderParameterSchema?,
        factory: @escaping Factory
    ) throws {
        guard registrations[id] == nil else {
            throw CertificateProviderError(
                .providerAlreadyRegistered,
                "a provider is already registered under the ID '\(id)'"
            )
        }
        guard !id.rawValue.isEmpty else {
            throw CertificateProviderError.invalidParameter("a provider ID must not be empty")
        }
        registrations[id] = Registration(id: id, description: description, schema: schema, factory: factory)
    }

    /// Makes a new instance of the provider registered under `id`.
    ///
    /// - Throws: `.providerNotFound` listing the registered IDs; whatever the factory throws.
    public func makeProvider(_ id: ProviderID) throws -> any CertificateProvider {
        guard let registration = registrations[id] else {
            let known = registeredIDs.map(\.rawValue).joined(separator: ", ")
            throw CertificateProviderError.providerNotFound(
                "no provider is registered under '\(id)'; registered: \(known.isEmpty ? "none" : known)"
            )
        }
        let provider = try registration.factory()
        guard provider.providerID == id else {
            throw CertificateProviderError.invalidParameter(
                "the factory registered under '\(id)' made a provider whose ID is '\(provider.providerID)'"
            )
        }
        return provider
    }

    /// The registered IDs, sorted.
    public var registeredIDs: [ProviderID] { registrations.keys.sorted() }

    /// The registrations, sorted by ID.
    public var registrationsByID: [Registration] { registeredIDs.compactMap { registrations[$0] } }

    /// The registration under `id`, nil when there is none.
    public func registration(_ id: ProviderID) -> Registration? { registrations[id] }

    /// The parameters of the provider registered under `id` as a text table (``ProviderParameterSchema/table()``),
    /// for help text (`certsign providers --params ID`).
    /// - Throws: `.providerNotFound` listing the registered IDs.
    public func parameterTable(_ id: ProviderID) throws -> String {
        guard let registration = registrations[id] else {
            let known = registeredIDs.map(\.rawValue).joined(separator: ", ")
            throw CertificateProviderError.providerNotFound(
                "no provider is registered under '\(id)'; registered: \(known.isEmpty ? "none" : known)"
            )
        }
        return registration.schema?.table() ?? "the \(id) provider declares no parameters"
    }

    /// Whether a provider is registered under `id`.
    public func contains(_ id: ProviderID) -> Bool { registrations[id] != nil }
}
