public import Foundation

/// Turns a `clientIdentity` alias and its password into an identity with a local key.
///
/// Remote providers do not know where identities are stored (a provider never imports another
/// provider): the app, or the CLI, passes a lookup over its identity store, for example
/// `{ alias, password in try store.identity(alias: alias, password: password) }` over a
/// `PKCS12IdentityStore`.
public typealias ClientIdentityLookup = @Sendable (_ alias: String, _ password: Secret?) throws -> SigningIdentity

/// What a host (an app, the `certsign` tool, a test) lends every provider it registers through
/// ``BuiltInProvider/register(in:parameters:context:)``: one value, the same for every provider, so
/// registering all of them is one loop.
///
/// Each provider takes what it needs and ignores the rest.
public struct ProviderContext: Sendable {
    /// Where providers that keep state on disk keep it (default nil: nowhere unless a parameter says
    /// so). Given to providers whose schema declares a `storeDirectory` parameter, as that parameter,
    /// when the parameters do not set it themselves.
    public var storeDirectory: URL?
    /// The environment `env:NAME` password sources are read from (default: this process's).
    public var environment: [String: String]
    /// Opens the `clientIdentity` parameter's alias (default nil: that parameter is refused).
    public var clientIdentityLookup: ClientIdentityLookup?
    /// Told, with a message, when a provider ignores a kept file (a session file others can read, a
    /// damaged cache); default none. Libraries never print: the host decides where this goes.
    public var warning: (@Sendable (String) -> Void)?

    /// Creates a context; every argument as the property of the same name, with its default.
    public init(
        storeDirectory: URL? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        clientIdentityLookup: ClientIdentityLookup? = nil,
        warning: (@Sendable (String) -> Void)? = nil
    ) {
        self.storeDirectory = storeDirectory
        self.environment = environment
        self.clientIdentityLookup = clientIdentityLookup
        self.warning = warning
    }
}
