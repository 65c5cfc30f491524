import CertificateProviders
internal import Durability
import Foundation
import PKCS12Provider

#if canImport(Glibc)
import Glibc
#endif

/// `certsign identity import | list | show | delete | export`: the local PKCS#12 identity store.
extension Commands {
    static let identityCommands: [CommandDescriptor] = [
        identityImport, identityList, identityShow, identityDelete, identityExport,
    ]

    /// `certsign identity import FILE …`.
    struct IdentityImportOptions: CommandOptions {
        var file = ""
        var alias: String?
        var keyAlias: String?
        var replaceIdentity = false
        var password = SecretInput()
        var storePassword = SecretInput()

        static var arguments: [ArgumentBinding<Self>] {
            [.one(\.file, "FILE", "the .p12/.pfx file", type: .file)]
        }

        static var options: [OptionBinding<Self>] {
            var options: [OptionBinding<Self>] = [
                .value(
                    \.alias,
                    "--alias",
                    "NAME",
                    "the store entry's name",
                    default: "the file name without extension",
                    convert: ValueConversions.alias
                ),
                .value(
                    \.keyAlias,
                    "--key-alias",
                    "NAME",
                    "which key of a file that holds several (friendly name or local key ID)"
                ),
                .flag(\.replaceIdentity, "--replace-identity", "replace an identity stored under the same alias"),
            ]
            options += .password(\.password, "the file's password (none for a file without one)")
            options += .secretSources(\.storePassword, "store-password", "the store password (at least 8 characters)")
            return options
        }
    }

    static let identityImport = CommandDescriptor(
        words: ["identity", "import"],
        summary: "import a .p12/.pfx file into the identity store",
        discussion: """
            The file's password also protects the stored copy unless a store password is given. A store
            password has at least 8 characters: for a file whose password is empty or shorter, give one with
            --store-password-env VAR or --store-password-file PATH, or answer the prompt when stdin is a
            terminal. The stored copy is re-encrypted with PBES2 / AES-256 (PBKDF2-HMAC-SHA256, 600 000
            iterations); files are 0600 in a 0700 directory.
            """,
        examples: ["certsign identity import ivanov.p12 --alias ivanov --password-env P12_PASSWORD"]
    ) { (options: IdentityImportOptions, context) in
        let path = options.file
        let bytes = try context.readInputFile(path, what: "PKCS#12 file")
        let alias = options.alias ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let password = try context.secret(options.password, prompt: "PKCS#12 password: ", required: false)
        var storePassword = try context.optionalSecret(options.storePassword)
        let minimum = PKCS12IdentityStore.minimumPasswordLength
        let fileCharacters = password?.withUnsafeBytes { String(decoding: $0, as: UTF8.self).count } ?? 0
        if storePassword == nil && fileCharacters < minimum {
            // The file's own password cannot protect the stored copy: check the file first, then ask.
            _ = try PKCS12File(data: bytes, password: password)
            guard context.console.inputIsTerminal else {
                throw CertificateProviderError(
                    .passwordRequired,
                    "the file's password is \(fileCharacters == 0 ? "empty" : "shorter than \(minimum) characters"), "
                        + "so it cannot protect the stored copy; give a store password of at least \(minimum) "
                        + "characters with --store-password-env VAR or --store-password-file PATH"
                )
            }
            storePassword = try context.console.promptSecret(
                "store password for '\(alias)' (at least \(minimum) characters): "
            )
        }
        let store = context.identityStore
        let (identity, metadata) = try store.import(
            pkcs12Data: bytes,
            password: password,
            keyAlias: options.keyAlias,
            alias: alias,
            storePassword: storePassword,
            replacingExisting: options.replaceIdentity
        )
        context.emit(
            encoding: IdentityCommandDocument(imported: IdentityDocument(metadata, chain: identity.chain)),
            human:
                "imported '\(metadata.alias)': \(metadata.subject)\n  valid until "
                + "\(Format.localDate(metadata.notValidAfter)), \(metadata.keyAlgorithm) "
                + "\(metadata.keySize)-bit, \(Format.issuers(identity.chain.count))"
        )
        return CertSign.exitSuccess
    }

    static let identityList = CommandDescriptor(
        words: ["identity", "list"],
        storeUse: .reads,
        summary: "list stored identities (no password needed)",
        examples: ["certsign --json identity list"]
    ) { context in
        let entries = try context.identityStore.list()
        let rows = entries.map {
            [$0.alias, $0.subject, Format.localDate($0.notValidAfter), "\($0.keyAlgorithm) \($0.keySize)"]
        }
        context.emit(
            encoding: IdentityCommandDocument(identities: entries.map { IdentityDocument($0, chain: nil) }),
            human: entries.isEmpty
                ? "no identities in \(context.storeDirectory.path)"
                : Format.table(["ALIAS", "SUBJECT", "VALID UNTIL", "KEY"], rows)
        )
        return CertSign.exitSuccess
    }

    /// `ALIAS`: a stored identity (show, delete).
    struct IdentityAliasOptions: CommandOptions {
        var alias = ""

        static var arguments: [ArgumentBinding<Self>] {
            [.one(\.alias, "ALIAS", "the stored identity's alias", convert: ValueConversions.alias)]
        }
    }

    static let identityShow = CommandDescriptor(
        words: ["identity", "show"],
        storeUse: .reads,
        summary: "show one stored identity's certificate details",
        examples: ["certsign identity show ivanov"]
    ) { (options: IdentityAliasOptions, context) in
        let alias = options.alias
        guard let metadata = try context.identityStore.metadata(alias: alias) else {
            throw CertificateProviderError(
                .notStored,
                "no identity is stored under the alias '\(alias)' in \(context.storeDirectory.path)"
            )
        }
        let lines = [
            "alias:        \(metadata.alias)",
            "subject:      \(metadata.subject)",
            "issuer:       \(metadata.issuer)",
            "serial:       \(metadata.serialNumber)",
            "valid from:   \(Format.localDate(metadata.notValidBefore))",
            "valid until:  \(Format.localDate(metadata.notValidAfter))\(metadata.notValidAfter < Date() ? "  (EXPIRED)" : "")",
            "key:          \(metadata.keyAlgorithm) \(metadata.keySize)-bit",
            "chain:        \(metadata.chainLength) certificate(s)",
            "sha-256:      \(metadata.sha256Fingerprint)",
            "imported:     \(Format.localDate(metadata.createdAt))",
        ]
        context.emit(
            encoding: IdentityCommandDocument(identity: IdentityDocument(metadata, chain: nil)),
            human: lines.joined(separator: "\n")
        )
        return CertSign.exitSuccess
    }

    /// `certsign identity delete ALIAS [--yes]`.
    struct IdentityDeleteOptions: CommandOptions {
        var alias = ""
        var yes = false

        static var arguments: [ArgumentBinding<Self>] {
            [.one(\.alias, "ALIAS", "the stored identity's alias", convert: ValueConversions.alias)]
        }

        static var options: [OptionBinding<Self>] {
            [.flag(\.yes, "--yes", "do not ask (on a terminal, delete asks first; scripts are never asked)")]
        }
    }

    static let identityDelete = CommandDescriptor(
        words: ["identity", "delete"],
        storeUse: .reads,
        summary: "delete a stored identity",
        discussion: """
            On a terminal it shows the identity and asks before deleting (--yes does not ask); without a \
            terminal on standard input it deletes without asking.
            """,
        examples: ["certsign identity delete ivanov", "certsign identity delete ivanov --yes"]
    ) { (options: IdentityDeleteOptions, context) in
        let alias = options.alias
        let store = context.identityStore
        guard let metadata = try store.metadata(alias: alias) else {
            throw CertificateProviderError(
                .notStored,
                "no identity is stored under the alias '\(alias)' in \(context.storeDirectory.path)"
            )
        }
        if !options.yes, context.console.inputIsTerminal {
            let question =
                "delete '\(alias)' (\(metadata.subject), valid until \(Format.localDate(metadata.notValidAfter))) "
                + "from \(context.storeDirectory.path)? The key cannot be recovered. [y/N] "
            guard context.console.confirm(question) else {
                context.console.err("certsign: nothing deleted")
                return CertSign.exitFailure
            }
        }
        guard try store.delete(alias: alias) else {
            throw CertificateProviderError(
                .notStored,
                "no identity is stored under the alias '\(alias)' in \(context.storeDirectory.path)"
            )
        }
        context.emit(encoding: IdentityCommandDocument(deleted: alias), human: "deleted '\(alias)'")
        return CertSign.exitSuccess
    }

    /// `certsign identity export ALIAS --out FILE …`.
    struct IdentityExportOptions: CommandOptions {
        var alias = ""
        /// Required: always set by the parser.
        var out = ""
        var password = SecretInput()
        var exportPassword = SecretInput()

        static var arguments: [ArgumentBinding<Self>] {
            [.one(\.alias, "ALIAS", "the stored identity's alias", convert: ValueConversions.alias)]
        }

        static var options: [OptionBinding<Self>] {
            var options: [OptionBinding<Self>] = [
                .value(
                    \.out,
                    "--out",
                    "FILE",
                    "the new .p12 file; it must not exist",
                    type: .file,
                    required: true
                ) { $0 }
            ]
            options += .password(\.password, "the store password")
            options += .secretSources(
                \.exportPassword,
                "export-password",
                "the new file's password (default: the store password)"
            )
            return options
        }
    }

    static let identityExport = CommandDescriptor(
        words: ["identity", "export"],
        storeUse: .reads,
        summary: "export a stored identity to a new .p12 file",
        discussion: """
            The new file is protected by the export password, PBES2 / AES-256 with a SHA-256 MAC, mode 0600.
            """,
        examples: ["certsign identity export ivanov --out ivanov-copy.p12 --password-env P12_PASSWORD"]
    ) { (options: IdentityExportOptions, context) in
        let alias = options.alias
        let out = options.out
        let store = context.identityStore
        guard try store.metadata(alias: alias) != nil else {
            throw CertificateProviderError(
                .notStored,
                "no identity is stored under the alias '\(alias)' in \(context.storeDirectory.path)"
            )
        }
        let password = try context.secret(options.password, prompt: "store password for '\(alias)': ")
        let exportPassword = try context.optionalSecret(options.exportPassword) ?? password
        guard let password, let exportPassword else {
            throw CertificateProviderError(.passwordRequired, "a password is needed")
        }
        try store.export(alias: alias, password: password, exportPassword: exportPassword, to: out)
        // The absolute path: a relative one means little in a log or to a later command elsewhere.
        let written = URL(fileURLWithPath: out).standardizedFileURL.path
        context.emit(
            encoding: IdentityCommandDocument(exported: .init(alias: alias, file: written)),
            human: "exported '\(alias)' to \(written)"
        )
        return CertSign.exitSuccess
    }
}

extension CommandContext {
    /// The PKCS#12 identity store at ``storeDirectory``.
    var identityStore: PKCS12IdentityStore { PKCS12IdentityStore(directory: storeDirectory) }

    /// Reads an input file, with errors that say what is wrong with the path.
    func readInputFile(_ path: String, what: String) throws -> [UInt8] {
        _ = try checkReadableFile(path, what: what)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CertificateProviderError(.fileSystem, "the \(what) \(path) cannot be read")
        }
        return Array(data)
    }

    /// Creates an output folder (`--out-dir`) with its missing parents; an existing one is used.
    /// - Throws: `.fileSystem` when it exists and is not a directory, or cannot be created.
    func makeOutputDirectory(_ path: String) throws { try FileSystem.makeOutputDirectory(path) }

    /// Checks that `path` is a regular file this process can open, and returns its size.
    /// - Throws: `.fileSystem` saying whether it is missing, a directory, or unreadable (and why).
    func checkReadableFile(_ path: String, what: String) throws -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            var link = stat()
            if code == ENOENT && lstat(path, &link) != 0 {
                throw CertificateProviderError(.fileSystem, "the \(what) \(path) does not exist")
            }
            throw CertificateProviderError(
                .fileSystem,
                "the \(what) \(path) cannot be read: \(String(cString: strerror(code)))"
            )
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw CertificateProviderError(.fileSystem, "\(path) is a directory, not a \(what)")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CertificateProviderError(
                .fileSystem,
                "the \(what) \(path) cannot be read: \(String(cString: strerror(errno))) (check its permissions)"
            )
        }
        close(descriptor)
        return Int64(info.st_size)
    }
}
