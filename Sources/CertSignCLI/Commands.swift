import CSCProvider
import CertificateProviders
import CryptoProDSSProvider
import FMPDSSProvider
import Foundation
import PKCS11Provider
import PKCS12Provider
import RemoteSigning

/// The command table.
enum Commands {
    static let all: [CommandDescriptor] =
        [providers] + identityCommands + signingCommands + timestampCommands + dssCommands + tokenCommands + cscCommands
        + [demo]  // commands: more are added by their files

    static func listing(_ commands: [CommandDescriptor]) -> String {
        let width = commands.map(\.name.count).max() ?? 0
        return commands.map { "  \($0.name.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.summary)" }
            .joined(separator: "\n")
    }

    static func overview() -> String {
        """
        certsign \(CertSign.version): sign and verify documents with certificates from any provider.

        usage: \(Invocation.globalUsage)

        commands:
        \(listing(all))

        global options:
          --store DIR   identity store (default $CERTSIGN_HOME, else $XDG_DATA_HOME/certsign, else ~/.local/share/certsign)
          --json        print one JSON document per command on stdout
          --help        help for certsign or for a command;  --version  print the version

        secrets are never taken as command-line values: use --password-env VAR, --password-file PATH,
        --password-stdin, or answer the prompt when stdin is a terminal.
        exit codes: 0 success, 1 the operation failed, 64 usage error.
        """
    }

    static let providers = CommandDescriptor(
        words: ["providers"],
        summary: "list the registered certificate providers",
        usage: "certsign providers [--params ID]",
        details: "  --params ID   the parameters provider ID takes (--param KEY=VALUE), secret ones marked",
        spec: OptionSpec(options: ["--params"])
    ) { parsed, context in
        let registry = try context.makeRegistry()
        if let id = parsed.value("--params").map({ ProviderID($0) }) {
            let table = try registry.parameterTable(id)
            let parameters = registry.registration(id)?.schema?.parameters ?? []
            context.emit(
                [
                    "provider": id.rawValue,
                    "parameters": parameters.map {
                        [
                            "key": $0.key.rawValue, "type": $0.type.description, "secret": $0.isSecret,
                            "default": $0.defaultValue ?? "", "description": $0.summary,
                        ] as [String: Any]
                    },
                ],
                human: table
            )
            return CertSign.exitSuccess
        }
        let rows = registry.registrationsByID
        context.emit(
            ["providers": rows.map { ["id": $0.id.rawValue, "description": $0.description] }],
            human: Format.table(["ID", "DESCRIPTION"], rows.map { [$0.id.rawValue, $0.description] })
        )
        return CertSign.exitSuccess
    }
}

extension CommandContext {
    /// The providers this tool offers. Only the CLI decides what is registered.
    /// - Parameters:
    ///   - pkcs12: parameters the `pkcs12` provider starts with (alias, store password), over the
    ///     store directory of this invocation.
    ///   - parameters: per provider, what the caller gave (`--param`): the provider is made with
    ///     them, so a stored session or certificate is used only when it matches them.
    func makeRegistry(
        pkcs12: ProviderParameters = ProviderParameters(),
        parameters: [ProviderID: ProviderParameters] = [:]
    ) throws -> ProviderRegistry {
        var registry = ProviderRegistry()
        let environment = self.environment
        let storeDirectory = self.storeDirectory
        let warn = warningPrinter
        // The remote providers' clientIdentity parameter names an identity in this store.
        let identities: ClientIdentityLookup = { alias, password in
            try PKCS12IdentityStore(directory: storeDirectory).identity(alias: alias, password: password)
        }
        try PKCS12CertificateProvider.register(
            in: &registry,
            parameters: ProviderParameters([.pkcs12StoreDirectory: .string(storeDirectory.path)]).merging(pkcs12),
            environment: environment
        )
        try FMPDSSProvider.register(
            in: &registry,
            parameters: [FMPDSSProvider.ParameterKey.storeDirectory: .string(storeDirectory.path)],
            clientIdentityLookup: identities,
            warning: warn
        )
        let cryptoPro = parameters[.cryptoProDSS] ?? ProviderParameters()
        try CryptoProDSSProvider.register(
            in: &registry,
            parameters: ProviderParameters([
                CryptoProDSSProvider.ParameterKey.storeDirectory: .string(storeDirectory.path)
            ])
            .merging(cryptoPro),
            clientIdentityLookup: identities,
            warning: warn
        )
        try CSCProvider.register(in: &registry, clientIdentityLookup: identities)
        try PKCS11CertificateProvider.register(in: &registry)
        return registry
    }
}
