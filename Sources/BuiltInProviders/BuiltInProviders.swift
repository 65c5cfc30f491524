import AWSKMSProvider
import CSCProvider
public import CertificateProviders
import CryptoProDSSProvider
import FMPDSSProvider
public import Foundation
import PKCS11Provider
import PKCS12Provider
import VaultTransitProvider

/// The one list of the providers this package ships: the `certsign` tool, the provider contract
/// tests and the bench register from here, so a new provider is one line below (and its folder,
/// and its `Package.swift` entry).
///
/// Apps pick providers themselves (there is no global registry): they call each provider's
/// ``CertificateProviders/BuiltInProvider/register(in:parameters:context:)``, or ``register(in:parameters:context:)``
/// here for all of them.
public enum BuiltInProviders {
    /// Every built-in provider, in the order `certsign` lists what concerns several of them.
    public static var all: [any BuiltInProvider.Type] {
        [
            PKCS12CertificateProvider.self,
            FMPDSSProvider.self,
            CryptoProDSSProvider.self,
            CSCProvider.self,
            PKCS11CertificateProvider.self,
            VaultTransitProvider.self,
            AWSKMSProvider.self,
        ]
    }

    /// How remote providers open their `clientIdentity` parameter (a TLS client certificate): an
    /// identity kept in the PKCS#12 identity store of `directory`, unlocked with the given password.
    public static func clientIdentityLookup(in directory: URL) -> ClientIdentityLookup {
        { alias, password in try PKCS12IdentityStore(directory: directory).identity(alias: alias, password: password) }
    }

    /// A PKCS#12 file of `identity` (its key, certificate and chain, PBES2 / AES-256), as the
    /// built-in PKCS#12 provider and `certsign identity import` read it: what a walk-through or a
    /// setup script hands a user who has no file yet.
    /// - Parameters:
    ///   - identity: an identity with a local key (one `CertificateIssuing` made, say).
    ///   - password: the file's password (not empty).
    ///   - friendlyName: the name stored with the key and the certificate.
    /// - Throws: `.unsupportedOperation` for a key that is not local, `.invalidParameter` for an empty
    ///   password, `.cryptoFailure` when OpenSSL fails.
    public static func pkcs12File(
        of identity: SigningIdentity,
        password: Secret,
        friendlyName: String
    ) throws -> [UInt8] {
        try PKCS12File.encode(identity, password: password, friendlyName: friendlyName)
    }

    /// The IDs of ``all``, in the same order.
    public static var ids: [ProviderID] { all.map { $0.id } }

    /// Registers every provider of ``all`` in `registry`, each with its own parameters and the one
    /// context.
    /// - Parameters:
    ///   - registry: where they are registered.
    ///   - parameters: per provider ID, what the providers it makes start with (default none).
    ///   - context: what the host lends every provider (store directory, environment, TLS client
    ///     identities, warnings).
    /// - Throws: `.providerAlreadyRegistered` when `registry` already holds one of the IDs;
    ///   `.invalidParameter` for parameters a provider's schema refuses.
    public static func register(
        in registry: inout ProviderRegistry,
        parameters: [ProviderID: ProviderParameters] = [:],
        context: ProviderContext = ProviderContext()
    ) throws {
        for provider in all {
            try provider.register(in: &registry, parameters: parameters[provider.id] ?? [:], context: context)
        }
    }
}
