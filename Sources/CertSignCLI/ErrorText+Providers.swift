import BuiltInProviders
import CertificateProviders

extension ErrorText {
    /// A hint written by the provider the command line named (`--provider ID`), or by the provider
    /// whose command group the command belongs to (`dss …`, `csc …`, `tokens`); nil falls back to the
    /// general hints. Each provider writes its own (`BuiltInProvider.commandLineHint(for:in:)`), naming
    /// only its own options and commands.
    static func providerHint(
        for error: CertificateProviderError,
        command: CommandDescriptor?,
        provider: String?
    ) -> String? {
        let group = command?.words.first
        let owner = BuiltInProviders.all.first { candidate in
            if let provider { return candidate.id.rawValue == provider }
            return group != nil && candidate.commandGroup == group
        }
        guard let owner else { return nil }
        let described = ProviderCommandLine(
            words: command?.words ?? [],
            optionNames: Set(command?.options.map(\.name) ?? [])
        )
        return owner.commandLineHint(for: error, in: described)
    }
}

extension Commands {
    /// The built-in provider registered under `id`, or nil (no ID, or an app's own).
    static func builtInProvider(_ id: ProviderID?) -> (any BuiltInProvider.Type)? {
        guard let id else { return nil }
        return BuiltInProviders.all.first { $0.id == id }
    }
}
