public import CertificateProviders
internal import Durability
import Foundation

/// `certsign identity import | list | show | delete | export`: the local PKCS#12 identity store in the
/// tool's store directory.
extension PKCS12CertificateProvider {
    /// The identity store commands.
    public static var commands: [ProviderCommand] {
        [importCommand, listCommand, showCommand, deleteCommand, exportCommand]
    }

    /// The identity store in the tool's store directory.
    static func identityStore(_ invocation: ProviderCommand.Invocation) throws -> (PKCS12IdentityStore, URL) {
        guard let directory = invocation.context.storeDirectory else {
            throw CertificateProviderError.invalidParameter("the identity commands need a store directory")
        }
        return (PKCS12IdentityStore(directory: directory), directory)
    }

    /// The alias argument, checked as the store checks it.
    /// - Throws: `ProviderCommand.UsageError` with the store's reason.
    static func checkedAlias(_ text: String) throws -> String {
        do {
            _ = try PKCS12IdentityStore.validateAlias(text)
        } catch let error as CertificateProviderError {
            throw ProviderCommand.UsageError(error.reason)
        }
        return text
    }

    /// `.notStored` for an alias the store does not hold.
    static func notStored(_ alias: String, in directory: URL) -> CertificateProviderError {
        CertificateProviderError(.notStored, "no identity is stored under the alias '\(alias)' in \(directory.path)")
    }

    /// `1 issuer certificate`, `no issuer certificates (leaf only)`.
    static func issuers(_ count: Int) -> String {
        switch count {
        case 0: "no issuer certificates (leaf only)"
        case 1: "1 issuer certificate"
        default: "\(count) issuer certificates"
        }
    }

    /// `certsign identity import FILE …`.
    static let importCommand = ProviderCommand(
        words: ["identity", "import"],
        summary: "import a .p12/.pfx file into the identity store",
        discussion: """
            The file's password also protects the stored copy unless a store password is given. A store
            password has at least 8 characters: for a file whose password is empty or shorter, give one with
            --store-password-env VAR or --store-password-file PATH, or answer the prompt when stdin is a
            terminal. The stored copy is re-encrypted with PBES2 / AES-256 (PBKDF2-HMAC-SHA256, 600 000
            iterations); files are 0600 in a 0700 directory.
            """,
        examples: ["certsign identity import ivanov.p12 --alias ivanov --password-env P12_PASSWORD"],
        options: [
            .init(
                "alias",
                .value(placeholder: "NAME"),
                "the store entry's name",
                default: "the file name without extension"
            ),
            .init(
                "key-alias",
                .value(placeholder: "NAME"),
                "which key of a file that holds several (friendly name or local key ID)"
            ),
            .init("replace-identity", .flag, "replace an identity stored under the same alias"),
            .init("password", .secret(standardInput: true), "the file's password (none for a file without one)"),
            .init(
                "store-password",
                .secret(standardInput: false),
                "the store password (at least 8 characters)"
            ),
        ],
        arguments: [.init("FILE", "the .p12/.pfx file", type: .file)]
    ) { invocation in
        let path = invocation.arguments.first ?? ""
        let given = try invocation.values["alias"].map(checkedAlias)
        let bytes = try FileSystem.readInputFile(path, what: "PKCS#12 file")
        let alias = given ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let password = try invocation.secret("password", prompt: "PKCS#12 password: ")
        var storePassword = try invocation.secret("store-password")
        let minimum = PKCS12IdentityStore.minimumPasswordLength
        let fileCharacters = password?.withUnsafeBytes { String(decoding: $0, as: UTF8.self).count } ?? 0
        if storePassword == nil && fileCharacters < minimum {
            // The file's own password cannot protect the stored copy: check the file first, then ask.
            _ = try PKCS12File(data: bytes, password: password)
            storePassword = try invocation.secret(
                "store-password",
                prompt: "store password for '\(alias)' (at least \(minimum) characters): "
            )
            guard storePassword != nil else {
                throw CertificateProviderError(
                    .passwordRequired,
                    "the file's password is \(fileCharacters == 0 ? "empty" : "shorter than \(minimum) characters"), "
                        + "so it cannot protect the stored copy; give a store password of at least \(minimum) "
                        + "characters with --store-password-env VAR or --store-password-file PATH"
                )
            }
        }
        let (identity, metadata) = try identityStore(invocation).0.import(
            pkcs12Data: bytes,
            password: password,
            keyAlias: invocation.values["key-alias"],
            alias: alias,
            storePassword: storePassword,
            replacingExisting: invocation.flags.contains("replace-identity")
        )
        return ProviderCommand.Output(
            text: "imported '\(metadata.alias)': \(metadata.subject)\n  valid until "
                + "\(invocation.dateText(metadata.notValidAfter)), \(metadata.keyAlgorithm) "
                + "\(metadata.keySize)-bit, \(issuers(identity.chain.count))",
            document: IdentityCommandDocument(imported: IdentityDocument(metadata, chain: identity.chain))
        )
    }

    /// `certsign identity list`.
    static let listCommand = ProviderCommand(
        words: ["identity", "list"],
        summary: "list stored identities (no password needed)",
        examples: ["certsign --json identity list"],
        readsStore: true
    ) { invocation in
        let (store, directory) = try identityStore(invocation)
        let entries = try store.list()
        return ProviderCommand.Output(
            headers: ["ALIAS", "SUBJECT", "VALID UNTIL", "KEY"],
            rows: entries.map {
                [$0.alias, $0.subject, invocation.dateText($0.notValidAfter), "\($0.keyAlgorithm) \($0.keySize)"]
            },
            whenEmpty: "no identities in \(directory.path)",
            document: IdentityCommandDocument(identities: entries.map { IdentityDocument($0, chain: nil) })
        )
    }
}
