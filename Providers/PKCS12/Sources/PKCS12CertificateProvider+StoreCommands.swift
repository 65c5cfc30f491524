import CertificateProviders
import Foundation

/// `certsign identity show | delete | export ALIAS`: one stored identity.
extension PKCS12CertificateProvider {
    /// `ALIAS`: a stored identity.
    static let aliasArgument = ProviderCommand.Argument("ALIAS", "the stored identity's alias")

    /// `certsign identity show ALIAS`.
    static let showCommand = ProviderCommand(
        words: ["identity", "show"],
        summary: "show one stored identity's certificate details",
        examples: ["certsign identity show ivanov"],
        arguments: [aliasArgument],
        readsStore: true
    ) { invocation in
        let (alias, store, directory, metadata) = try storedIdentity(invocation)
        let date = invocation.dateText
        let lines = [
            "alias:        \(metadata.alias)",
            "subject:      \(metadata.subject)",
            "issuer:       \(metadata.issuer)",
            "serial:       \(metadata.serialNumber)",
            "valid from:   \(date(metadata.notValidBefore))",
            "valid until:  \(date(metadata.notValidAfter))\(metadata.notValidAfter < Date() ? "  (EXPIRED)" : "")",
            "key:          \(metadata.keyAlgorithm) \(metadata.keySize)-bit",
            "chain:        \(metadata.chainLength) certificate(s)",
            "sha-256:      \(metadata.sha256Fingerprint)",
            "imported:     \(date(metadata.createdAt))",
        ]
        return ProviderCommand.Output(
            text: lines.joined(separator: "\n"),
            document: IdentityCommandDocument(identity: IdentityDocument(metadata, chain: nil))
        )
    }

    /// `certsign identity delete ALIAS [--yes]`.
    static let deleteCommand = ProviderCommand(
        words: ["identity", "delete"],
        summary: "delete a stored identity",
        discussion: """
            On a terminal it shows the identity and asks before deleting (--yes does not ask); without a \
            terminal on standard input it deletes without asking.
            """,
        examples: ["certsign identity delete ivanov", "certsign identity delete ivanov --yes"],
        options: [.init("yes", .flag, "do not ask (on a terminal, delete asks first; scripts are never asked)")],
        arguments: [aliasArgument],
        readsStore: true
    ) { invocation in
        let (alias, store, directory, metadata) = try storedIdentity(invocation)
        if !invocation.flags.contains("yes"), let confirm = invocation.confirm {
            let question =
                "delete '\(alias)' (\(metadata.subject), valid until \(invocation.dateText(metadata.notValidAfter))) "
                + "from \(directory.path)? The key cannot be recovered. [y/N] "
            guard confirm(question) else { throw CertificateProviderError(.cancelled, "nothing deleted") }
        }
        guard try store.delete(alias: alias) else { throw notStored(alias, in: directory) }
        return ProviderCommand.Output(text: "deleted '\(alias)'", document: IdentityCommandDocument(deleted: alias))
    }

    /// `certsign identity export ALIAS --out FILE …`.
    static let exportCommand = ProviderCommand(
        words: ["identity", "export"],
        summary: "export a stored identity to a new .p12 file",
        discussion: """
            The new file is protected by the export password, PBES2 / AES-256 with a SHA-256 MAC, mode 0600.
            """,
        examples: ["certsign identity export ivanov --out ivanov-copy.p12 --password-env P12_PASSWORD"],
        options: [
            .init(
                "out",
                .value(placeholder: "FILE", type: .file),
                "the new .p12 file; it must not exist",
                required: true
            ),
            .init("password", .secret(standardInput: true), "the store password"),
            .init(
                "export-password",
                .secret(standardInput: false),
                "the new file's password (default: the store password)"
            ),
        ],
        arguments: [aliasArgument],
        readsStore: true
    ) { invocation in
        let alias = try checkedAlias(invocation.arguments.first ?? "")
        let out = invocation.values["out"] ?? ""
        let (store, directory) = try identityStore(invocation)
        guard try store.metadata(alias: alias) != nil else { throw notStored(alias, in: directory) }
        let password = try invocation.requiredSecret("password", prompt: "store password for '\(alias)': ")
        let exportPassword = try invocation.secret("export-password") ?? password
        try store.export(alias: alias, password: password, exportPassword: exportPassword, to: out)
        // The absolute path: a relative one means little in a log or to a later command elsewhere.
        let written = URL(fileURLWithPath: out).standardizedFileURL.path
        return ProviderCommand.Output(
            text: "exported '\(alias)' to \(written)",
            document: IdentityCommandDocument(exported: .init(alias: alias, file: written))
        )
    }

    /// The identity the command's ALIAS names: the alias (checked), the store, its directory and the
    /// identity's details.
    /// - Throws: the alias check's and the store's errors; `notStored` naming the alias and the store.
    private static func storedIdentity(
        _ invocation: ProviderCommand.Invocation
    ) throws -> (String, PKCS12IdentityStore, URL, PKCS12IdentityStore.Metadata) {
        let alias = try checkedAlias(invocation.arguments.first ?? "")
        let (store, directory) = try identityStore(invocation)
        guard let metadata = try store.metadata(alias: alias) else { throw notStored(alias, in: directory) }
        return (alias, store, directory, metadata)
    }
}
