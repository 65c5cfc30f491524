/// A provider's `ParameterKey` namespace: its keys as constants, and ``all`` and ``secrets`` read from
/// the provider's schema (so the schema stays the one list).
public protocol ProviderParameterKeys {
    /// The provider whose ``BuiltInProvider/schema`` declares the keys.
    associatedtype Provider: BuiltInProvider
}

extension ProviderParameterKeys {
    /// Every key the provider accepts (the keys of its schema).
    public static var all: Set<ProviderParameters.Key> { Provider.schema.keys }
    /// The keys whose values are secrets (declared so in its schema).
    public static var secrets: Set<ProviderParameters.Key> { Provider.schema.secretKeys }
}
