import BuiltInProviders
import CSCProvider
import CertificateProviders
import CertificateProvidersTesting
import CryptoProDSSProvider
import FMPDSSProvider
import Foundation
import HTTPClient
import PKCS11Provider
import PKCS12Provider
import RemoteProviderSupport
import TestSupport
import Testing
import VaultTransitProvider

/// Every provider declares its parameters once (a schema) and registers itself with one call; all
/// of them validate through that schema, at the same moments (`setParameters` and
/// `initialize(options:)`), with the same messages; the CLI's `--param` and
/// `providers --params ID` follow the same declarations.
@Suite struct ProviderParameterContractTests {
    /// The registry as the CLI makes it: every provider of the one list, each through the same
    /// `register(in:parameters:context:)`.
    static func registry(store: TemporaryDirectory) throws -> ProviderRegistry {
        var registry = ProviderRegistry()
        try BuiltInProviders.register(
            in: &registry,
            parameters: [.pkcs12: [PKCS12CertificateProvider.ParameterKey.storeDirectory: .string(store.url.path)]]
        )
        return registry
    }

    /// Every built-in provider (a new one is checked here once it is in the list).
    static let allIDs: [ProviderID] = BuiltInProviders.ids

    /// A value of the wrong shape for `type`, or nil when every value fits (plain strings).
    static func badValue(for parameter: ProviderParameterSchema.Parameter) -> ProviderParameters.Value {
        switch parameter.type {
        case .string: return .data([1])
        case .secret: return .integer(7)
        case .bytes: return .string("text")
        case .path: return .string(" ")
        default: return .string("not-a-valid-value")  // integer, seconds, boolean, URL, one of a list
        }
    }

    static func invalid(_ body: () throws -> Void) -> CertificateProviderError? {
        do {
            try body()
            Issue.record("accepted")
            return nil
        } catch let error as CertificateProviderError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test("one register(in:) call per provider registers the provider with its description and schema")
    func oneRegistrationCall() throws {
        let store = try TemporaryDirectory()
        let registry = try Self.registry(store: store)
        // Every provider folder's library (a library product whose target lives under Providers/) is
        // in the one list, so a provider added to the manifest but not to BuiltInProviders fails here.
        let manifest = try PackageRoot.manifest()
        let products = try #require(manifest["products"] as? [[String: Any]])
        let libraries = Set(
            products.filter { ($0["type"] as? [String: Any])?["library"] != nil }
                .flatMap { $0["targets"] as? [String] ?? [] }
        )
        let targets = try #require(manifest["targets"] as? [[String: Any]])
        let providerLibraries = Set(
            targets.compactMap { target -> String? in
                guard let name = target["name"] as? String, libraries.contains(name),
                    (target["path"] as? String)?.hasPrefix("Providers/") == true
                else { return nil }
                return name
            }
        )
        let listed = Set(BuiltInProviders.all.map { String(String(reflecting: $0).prefix { $0 != "." }) })
        #expect(providerLibraries.count >= 7)
        #expect(listed == providerLibraries)
        #expect(Set(Self.allIDs).count == Self.allIDs.count)
        #expect(registry.registeredIDs == Self.allIDs.sorted())
        for id in Self.allIDs {
            let registration = try #require(registry.registration(id))
            let schema = try #require(registration.schema, "\(id) has no schema")
            #expect(schema.provider == id)
            #expect(!registration.description.isEmpty)
            #expect(try registry.makeProvider(id).providerID == id)
        }
        #expect(registry.registration(.pkcs12)?.description == PKCS12CertificateProvider.summary)
        #expect(registry.registration(.csc)?.description == CSCProvider.summary)
        for provider in BuiltInProviders.all {
            #expect(registry.registration(provider.id)?.description == provider.summary)
            #expect(provider.schema.provider == provider.id)
        }
    }

    @Test("the context's store directory reaches the providers that declare storeDirectory; a parameter wins")
    func contextStoreDirectory() throws {
        let store = try TemporaryDirectory()
        let key: ProviderParameters.Key = "storeDirectory"
        var registry = ProviderRegistry()
        try BuiltInProviders.register(
            in: &registry,
            parameters: [.cryptoProDSS: [key: .string("/elsewhere")]],
            context: ProviderContext(storeDirectory: store.url)
        )
        var reached: [ProviderID] = []
        for provider in BuiltInProviders.all {
            let made = try registry.makeProvider(provider.id)
            if provider.schema[key] == nil {
                #expect(made.parameters[key] == nil, "\(provider.id)")
            } else {
                reached.append(provider.id)
                let expected = provider.id == .cryptoProDSS ? "/elsewhere" : store.url.path
                #expect(made.parameters[key] == .string(expected), "\(provider.id)")
            }
        }
        #expect(reached == [.pkcs12, .fmpDSS, .cryptoProDSS])
    }

    @Test(
        "every declared parameter: a wrong-typed value is refused by setParameters naming the key, and the old parameters stay",
        arguments: allIDs
    )
    func everyParameterIsValidated(id: ProviderID) throws {
        let store = try TemporaryDirectory()
        let registry = try Self.registry(store: store)
        let schema = try #require(registry.registration(id)?.schema)
        for parameter in schema.parameters {
            let bad = Self.badValue(for: parameter)
            let provider = try registry.makeProvider(id)
            let before = provider.parameters
            let error = Self.invalid { try provider.setParameters([parameter.key: bad]) }
            #expect(error?.code == .invalidParameter, "\(id) \(parameter.key)")
            #expect(
                error?.reason.hasPrefix("parameter '\(parameter.key)' must be ") == true,
                "\(id): \(String(describing: error))"
            )
            #expect(provider.parameters == before)
        }
    }

    @Test(
        "setParameters and initialize(options:) refuse the same bad value with the same message, before any I/O",
        arguments: allIDs
    )
    func sameMomentSameMessage(id: ProviderID) async throws {
        let store = try TemporaryDirectory()
        let registry = try Self.registry(store: store)
        let schema = try #require(registry.registration(id)?.schema)
        var cases: [ProviderParameters] = [["colour": .string("red")]]
        if schema[RemoteProviderParameters.timeout.key] != nil {
            cases.append([RemoteProviderParameters.timeout.key: .string("0")])
        }
        for bad in cases {
            let provider = try registry.makeProvider(id)
            let set = Self.invalid { try provider.setParameters(bad) }
            var initialized: CertificateProviderError?
            do {
                _ = try await provider.initialize(options: bad)
                Issue.record("\(id) initialized with \(bad)")
            } catch let error as CertificateProviderError {
                initialized = error
            }
            #expect(set?.code == .invalidParameter)
            #expect(set?.reason == initialized?.reason, "\(id)")
            if bad["colour"] != nil {
                #expect(
                    set?.reason.hasPrefix("parameter 'colour' is not known to the \(id) provider (it takes: ") == true
                )
            } else {
                #expect(set?.reason == "parameter 'timeout' must be a positive whole number of seconds, not '0'")
            }
        }
    }

    @Test("every secret parameter given as text is kept redacted", arguments: allIDs)
    func secretsAreRedacted(id: ProviderID) throws {
        let store = try TemporaryDirectory()
        let registry = try Self.registry(store: store)
        let schema = try #require(registry.registration(id)?.schema)
        #expect(!schema.secretKeys.isEmpty)
        for key in schema.secretKeys {
            let provider = try registry.makeProvider(id)
            var values: ProviderParameters = [key: .string("Zz-secret-\(key)")]
            if schema[RemoteProviderParameters.clientIdentity.key] != nil {
                values[RemoteProviderParameters.clientIdentity.key] = .string("tls")
            }
            try provider.setParameters(values)
            #expect(!provider.parameters.description.contains("Zz-secret"), "\(id) \(key)")
            #expect(provider.parameters[key] == nil || provider.parameters[key] == .secret(Secret("Zz-secret-\(key)")))
        }
    }

    @Test("no secret parameter declares a default: a table never shows one for a secret", arguments: allIDs)
    func secretsHaveNoDefault(id: ProviderID) throws {
        let store = try TemporaryDirectory()
        let registry = try Self.registry(store: store)
        let schema = try #require(registry.registration(id)?.schema)
        for parameter in schema.parameters where parameter.isSecret {
            #expect(
                parameter.defaultValue == nil,
                "\(id) \(parameter.key) shows the default '\(parameter.defaultValue ?? "")'"
            )
        }
        let rows = try registry.parameterTable(id).split(separator: "\n")
        for key in schema.secretKeys {
            let row = try #require(rows.first { $0.hasPrefix(key.rawValue + " ") })
            let columns = row.split(separator: " ", omittingEmptySubsequences: true)
            #expect(columns.count > 2 && columns[2] == "-", "\(id): \(row)")
        }
    }

    @Test("each provider's table lists its keys and marks its secrets", arguments: allIDs)
    func tables(id: ProviderID) throws {
        let store = try TemporaryDirectory()
        let registry = try Self.registry(store: store)
        let schema = try #require(registry.registration(id)?.schema)
        let table = try registry.parameterTable(id)
        let rows = table.split(separator: "\n").map(String.init)
        for parameter in schema.parameters {
            let row = try #require(rows.first { $0.hasPrefix(parameter.key.rawValue + " ") }, "\(id) \(parameter.key)")
            #expect(row.contains(parameter.summary))
            #expect(row.contains(" secret ") == parameter.isSecret, "\(row)")
        }
        let secrets = schema.parameters.filter(\.isSecret).map(\.key.rawValue).joined(separator: ", ")
        #expect(rows.last == "secret parameters (\(secrets)) are never shown and never taken on a command line")
    }

    // MARK: The CLI follows the same declarations

    @Test("certsign providers --params ID prints the table the library renders; --json marks secrets")
    func providersParams() throws {
        let store = try TemporaryDirectory()
        for id in Self.allIDs {
            let result = try CLI.run(["providers", "--params", id.rawValue], store: store)
            #expect(result.status == 0, "\(result.errorOutput)")
            let table = try Self.registry(store: store).parameterTable(id)
            #expect(result.output.trimmingCharacters(in: .newlines) == table)
        }
        let json = try CLI.json(try CLI.run(["--json", "providers", "--params", "csc"], store: store))
        let parameters = try #require(json["parameters"] as? [[String: Any]])
        let secret = Dictionary(
            uniqueKeysWithValues: parameters.map { ($0["key"] as? String ?? "", $0["secret"] as? Bool) }
        )
        #expect(secret["clientSecret"] == true && secret["otp"] == true && secret["url"] == false)
        #expect(Set(secret.keys) == Set(CSCProvider.schema.keys.map(\.rawValue)))
        let unknown = try CLI.run(["providers", "--params", "nope"], store: store)
        #expect(unknown.status == 1 && unknown.errorOutput.contains("no provider is registered under 'nope'"))
    }

    @Test(
        "--param: every secret the schema declares is refused (64) without echoing it; bad values get the schema's message",
        arguments: allIDs.filter { $0 != .fmpDSS }  // 'certsign dss' configures fmp-dss; sign refuses it
    )
    func commandLineParameters(id: ProviderID) throws {
        let store = try TemporaryDirectory()
        let document = store.url.appendingPathComponent("doc.txt")
        try Data("text".utf8).write(to: document)
        let schema = try #require(try Self.registry(store: store).registration(id)?.schema)
        for key in schema.secretKeys {
            let result = try CLI.run(
                ["sign", document.path, "--provider", id.rawValue, "--param", "\(key)=Zz-cli-secret"],
                store: store
            )
            #expect(result.status == 64, "\(id) \(key): \(result.errorOutput)")
            #expect(result.errorOutput.contains("--param-env \(key)=VAR"), "\(result.errorOutput)")
            #expect(!result.errorOutput.contains("Zz-cli-secret") && !result.output.contains("Zz-cli-secret"))
        }
        try Self.expectSignRefuses(
            document,
            id,
            parameter: "colour=red",
            saying: "parameter 'colour' is not known to the \(id) provider",
            store: store
        )
    }

    /// `certsign sign DOCUMENT --provider ID --param PARAMETER` exits 1 with `message` on stderr.
    static func expectSignRefuses(
        _ document: URL,
        _ id: ProviderID,
        parameter: String,
        saying message: String,
        store: TemporaryDirectory,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let result = try CLI.run(
            ["sign", document.path, "--provider", id.rawValue, "--param", parameter],
            store: store
        )
        #expect(
            result.status == 1 && result.errorOutput.contains(message),
            "\(id): \(result.errorOutput)",
            sourceLocation: sourceLocation
        )
    }

    @Test("a remote provider's --param timeout=0 is refused with the schema's message (CryptoPro and CSC alike)")
    func timeoutAgrees() throws {
        let store = try TemporaryDirectory()
        let document = store.url.appendingPathComponent("doc.txt")
        try Data("text".utf8).write(to: document)
        for id in [ProviderID.cryptoProDSS, .csc] {
            try Self.expectSignRefuses(
                document,
                id,
                parameter: "timeout=0",
                saying: "parameter 'timeout' must be a positive whole number of seconds, not '0'",
                store: store
            )
        }
    }
}
