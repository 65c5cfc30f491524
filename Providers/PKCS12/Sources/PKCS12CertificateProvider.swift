public import CertificateProviders
public import Foundation
import Synchronization

extension ProviderParameters.Key {
    /// Renamed ``PKCS12CertificateProvider/ParameterKey/file`` (the `file` key).
    @available(*, deprecated, renamed: "PKCS12CertificateProvider.ParameterKey.file")
    public static var pkcs12File: Self { PKCS12CertificateProvider.ParameterKey.file }
    /// Renamed ``PKCS12CertificateProvider/ParameterKey/data`` (the `data` key).
    @available(*, deprecated, renamed: "PKCS12CertificateProvider.ParameterKey.data")
    public static var pkcs12Data: Self { PKCS12CertificateProvider.ParameterKey.data }
    /// Renamed ``PKCS12CertificateProvider/ParameterKey/password`` (the `password` key).
    @available(*, deprecated, renamed: "PKCS12CertificateProvider.ParameterKey.password")
    public static var pkcs12Password: Self { PKCS12CertificateProvider.ParameterKey.password }
    /// Renamed ``PKCS12CertificateProvider/ParameterKey/alias`` (the `alias` key).
    @available(*, deprecated, renamed: "PKCS12CertificateProvider.ParameterKey.alias")
    public static var pkcs12Alias: Self { PKCS12CertificateProvider.ParameterKey.alias }
    /// Renamed ``PKCS12CertificateProvider/ParameterKey/keyAlias`` (the `keyAlias` key).
    @available(*, deprecated, renamed: "PKCS12CertificateProvider.ParameterKey.keyAlias")
    public static var pkcs12KeyAlias: Self { PKCS12CertificateProvider.ParameterKey.keyAlias }
    /// Renamed ``PKCS12CertificateProvider/ParameterKey/storeDirectory`` (the `storeDirectory` key).
    @available(*, deprecated, renamed: "PKCS12CertificateProvider.ParameterKey.storeDirectory")
    public static var pkcs12StoreDirectory: Self { PKCS12CertificateProvider.ParameterKey.storeDirectory }
    /// Renamed ``PKCS12CertificateProvider/ParameterKey/storePassword`` (the `storePassword` key).
    @available(*, deprecated, renamed: "PKCS12CertificateProvider.ParameterKey.storePassword")
    public static var pkcs12StorePassword: Self { PKCS12CertificateProvider.ParameterKey.storePassword }
    /// Renamed ``PKCS12CertificateProvider/ParameterKey/passwordSource`` (the `passwordSource` key).
    @available(*, deprecated, renamed: "PKCS12CertificateProvider.ParameterKey.passwordSource")
    public static var pkcs12PasswordSource: Self { PKCS12CertificateProvider.ParameterKey.passwordSource }
    /// Renamed ``PKCS12CertificateProvider/ParameterKey/storePasswordSource`` (the `storePasswordSource` key).
    @available(*, deprecated, renamed: "PKCS12CertificateProvider.ParameterKey.storePasswordSource")
    public static var pkcs12StorePasswordSource: Self { PKCS12CertificateProvider.ParameterKey.storePasswordSource }
    /// Renamed ``PKCS12CertificateProvider/ParameterKey/inMemory`` (the `inMemory` key).
    @available(*, deprecated, renamed: "PKCS12CertificateProvider.ParameterKey.inMemory")
    public static var pkcs12InMemory: Self { PKCS12CertificateProvider.ParameterKey.inMemory }
}

/// The `pkcs12` provider: signs with identities from PKCS#12 files, kept in an encrypted
/// ``PKCS12IdentityStore``, following SAP's `CertificateProvider` contract.
///
/// Parameters (keys are static members of ``ParameterKey``): ``schema`` declares them
/// (key, type, default, secret or not, meaning); `certsign providers --params pkcs12` prints them.
///
/// - ``initialize(options:)`` opens the file, stores its identity under the alias (replacing an
///   older one of that alias), keeps `alias`, `keyAlias`, `storeDirectory` and the effective
///   `storePassword` (or `storePasswordSource`, or the file's `passwordSource` when that also
///   protects the stored copy) in ``parameters`` (never `file`, `data`, `password` or
///   `passwordSource`) and returns the identity.
/// - ``storedCertificate()`` returns the identity stored under the alias, nil when there is none;
///   it never prompts. It needs `storePassword` and throws `.passwordRequired` without it,
///   `.wrongPassword` when it does not unlock the entry. The unlocked identity is kept in memory
///   (keyed by the stored file's SHA-256 and the password), so signing many documents opens the
///   PKCS#12 once.
/// - With `inMemory`, ``initialize(options:)`` only opens the file (no store, no store password)
///   and ``storedCertificate()`` returns that identity, nil before.
/// - ``deleteStoredCertificate()`` removes the entry; it succeeds when nothing is stored.
/// - ``setParameters(_:)`` rejects unknown keys and bad values with `.invalidParameter` naming the key.
public final class PKCS12CertificateProvider: CertificateProvider {
    /// The parameter keys this provider reads (``schema`` declares them); the raw values are the
    /// `--param` words.
    public enum ParameterKey: ProviderParameterKeys {
        /// The provider whose schema declares the keys (``ProviderParameterKeys/all`` comes from it).
        public typealias Provider = PKCS12CertificateProvider

        /// The path of the `.p12` / `.pfx` file to import (string). Used once by
        /// `initialize(options:)`, not kept.
        public static let file: ProviderParameters.Key = "file"
        /// The bytes of the PKCS#12 file to import (data), instead of `file`. Not kept.
        public static let data: ProviderParameters.Key = "data"
        /// The password of the imported file (secret; absent when it has none). Not kept.
        public static let password: ProviderParameters.Key = "password"
        /// The alias the identity is stored under (string, default `default`); also
        /// selects the key of a file that holds several, when `keyAlias` is absent.
        public static let alias: ProviderParameters.Key = "alias"
        /// Which key of the imported file to take: its friendly name or hex local key
        /// ID (string). Optional.
        public static let keyAlias: ProviderParameters.Key = "keyAlias"
        /// The identity store directory (string path or file URL). Required unless `inMemory`:
        /// the app chooses where its identities live (the `certsign` tool passes its own
        /// `$CERTSIGN_HOME` / XDG default).
        public static let storeDirectory: ProviderParameters.Key = "storeDirectory"
        /// The password protecting the stored copy (secret; default: the imported
        /// file's password). Needed by `storedCertificate()` to unlock the key.
        public static let storePassword: ProviderParameters.Key = "storePassword"
        /// Where to read the imported file's password instead of `password`:
        /// `env:NAME` (an environment variable) or `file:PATH` (the file's first line), as in
        /// `openssl -passin`. Not kept.
        public static let passwordSource: ProviderParameters.Key = "passwordSource"
        /// Where to read the store password instead of `storePassword`: `env:NAME`
        /// or `file:PATH`. Kept, so the secret itself need not be.
        public static let storePasswordSource: ProviderParameters.Key = "storePasswordSource"
        /// Open the file in memory only (boolean, default false): `initialize`
        /// stores nothing, needs no store password, and `storedCertificate()` returns the identity it
        /// opened until `deleteStoredCertificate()` or the provider ends. No copy of the key reaches disk.
        public static let inMemory: ProviderParameters.Key = "inMemory"
    }

    /// Every key this provider accepts; renamed ``ParameterKey/all``.
    @available(*, deprecated, renamed: "ParameterKey.all")
    public static var acceptedKeys: Set<ProviderParameters.Key> { ParameterKey.all }

    /// The provider's parameters, each declared once (validation, redaction and help come from here).
    public static let schema = ProviderParameterSchema(
        provider: .pkcs12,
        [
            .init(ParameterKey.file, .path, "the PKCS#12 file to import (initialize only, not kept)"),
            .init(ParameterKey.data, .bytes, "the PKCS#12 bytes to import instead of file (not kept)"),
            .init(ParameterKey.password, .secret, "the imported file's password (not kept)"),
            .init(ParameterKey.passwordSource, .string, "env:NAME or file:PATH to read password from"),
            .init(ParameterKey.alias, .string, default: defaultAlias, "the store entry the identity is kept under"),
            .init(ParameterKey.keyAlias, .string, "which key of a file with several: friendly name or hex key ID"),
            .init(ParameterKey.storeDirectory, .path, "the identity store directory (required unless inMemory)"),
            .init(
                ParameterKey.storePassword,
                .secret,
                "protects the stored copy (when not given: the imported file's password)"
            ),
            .init(ParameterKey.storePasswordSource, .string, "env:NAME or file:PATH to read storePassword from"),
            .init(ParameterKey.inMemory, .boolean, default: "false", "open the file in memory only and store nothing"),
        ],
        rules: [{ try PKCS12CertificateProvider.checkCombinations($0) }]
    )

    /// One line saying what the provider is (`certsign providers`).
    public static let summary = "local PKCS#12 (.p12/.pfx) files and the encrypted identity store"
    /// The alias used when none is configured.
    public static let defaultAlias = "default"

    private struct Cached {
        var fileDigest: [UInt8]
        var password: Secret
        var identity: SigningIdentity
    }

    private struct State {
        var parameters: ProviderParameters
        var cache: [String: Cached] = [:]
        var openCount = 0
        /// The identity `initialize` opened with `inMemory`.
        var inMemoryIdentity: SigningIdentity?
    }

    private let environment: [String: String]
    private let state: Mutex<State>
    /// Held while a PKCS#12 is being unlocked, so that tasks asking at once share one unlock.
    private let unlocking = Mutex(())

    /// Creates a provider.
    /// - Parameters:
    ///   - parameters: initial parameters (validated as by ``setParameters(_:)``).
    ///   - environment: where `env:NAME` password sources are looked up.
    /// - Throws: `.invalidParameter` naming a rejected key.
    public init(
        parameters: ProviderParameters = ProviderParameters(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        self.environment = environment
        self.state = Mutex(State(parameters: try PKCS12CertificateProvider.schema.validate(parameters)))
    }

    /// The current parameters: what was set, plus after ``initialize(options:)`` the alias and the
    /// effective store password (import inputs `file`, `data`, `password` are not kept).
    public var parameters: ProviderParameters { state.withLock { $0.parameters } }

    /// Replaces the parameters after checking every key and value.
    /// - Throws: `.invalidParameter` naming the key; the previous parameters stay in force.
    public func setParameters(_ parameters: ProviderParameters) throws {
        let parameters = try PKCS12CertificateProvider.schema.validate(parameters)
        state.withLock { $0.parameters = parameters }
    }

    /// The store the current parameters point at (tests and the bench read it; apps use the store type).
    package var store: PKCS12IdentityStore {
        get throws { try makeStore(state.withLock { $0.parameters }) }
    }

    /// How many times this provider decrypted a PKCS#12 (imports and unlocks); a diagnostic that
    /// shows the in-memory cache at work.
    package var pkcs12OpenCount: Int { state.withLock { $0.openCount } }

    /// Imports the PKCS#12 file given by `file` or `data` (with `password`) into the store under
    /// `alias`, replacing an older entry of that alias, and returns its identity.
    /// - Throws: `.invalidParameter` (no file, bad keys, ambiguous key), `.fileSystem`,
    ///   `.wrongPassword`, `.passwordRequired`, `.malformedInput`, `.unsupportedAlgorithm`,
    ///   `.noPrivateKey`, `.keyCertificateMismatch`.
    public func initialize(options: ProviderParameters) async throws -> SigningIdentity {
        let options = try PKCS12CertificateProvider.schema.validate(options)
        var merged = state.withLock { $0.parameters }.merging(options)
        // The import source given now wins over one left in the parameters.
        if options[ParameterKey.data] != nil { merged[ParameterKey.file] = nil }
        if options[ParameterKey.file] != nil { merged[ParameterKey.data] = nil }
        let bytes: [UInt8]
        if let data = try merged.data(ParameterKey.data) {
            bytes = data
        } else if let path = try merged.string(ParameterKey.file) {
            bytes = try PKCS12File.readFile(PKCS12CertificateProvider.path(path))
        } else {
            throw CertificateProviderError.invalidParameter(
                "parameter 'file' (a PKCS#12 path) or 'data' (its bytes) is required to initialize the pkcs12 provider"
            )
        }
        let password = try resolveSecret(merged, direct: ParameterKey.password, source: ParameterKey.passwordSource)
        let alias = try PKCS12IdentityStore.validateAlias(try merged.string(ParameterKey.alias) ?? Self.defaultAlias)
        let keyAlias = try merged.string(ParameterKey.keyAlias)
        if try merged.boolean(ParameterKey.inMemory) == true {
            state.withLock { $0.openCount += 1 }
            let file = try PKCS12File(data: bytes, password: password)
            let explicitAlias = merged[ParameterKey.alias] != nil ? alias : nil
            let identity = try file.identity(alias: keyAlias ?? (file.keys.count > 1 ? explicitAlias : nil))
            var kept = merged
            for key in [ParameterKey.file, ParameterKey.data, ParameterKey.password, ParameterKey.passwordSource] {
                kept[key] = nil
            }
            state.withLock {
                $0.parameters = kept
                $0.inMemoryIdentity = identity
            }
            return identity
        }
        let storePassword =
            try resolveSecret(merged, direct: ParameterKey.storePassword, source: ParameterKey.storePasswordSource)
            ?? password
        guard let storePassword, !storePassword.isEmpty else {
            throw try Self.missingStorePassword(bytes, password: password)
        }
        let store = try makeStore(merged)
        state.withLock { $0.openCount += 1 }
        let file = try PKCS12File(data: bytes, password: password)
        // With several keys in the file, an explicit alias also names the key to take.
        let explicitAlias = merged[ParameterKey.alias] != nil ? alias : nil
        let identity = try file.identity(alias: keyAlias ?? (file.keys.count > 1 ? explicitAlias : nil))
        try store.import(identity, alias: alias, storePassword: storePassword, replacingExisting: true)
        let storedDigest = try store.pkcs12Data(alias: alias).map { DigestAlgorithm.sha256.hash($0) } ?? []

        var kept = merged
        kept[ParameterKey.file] = nil
        kept[ParameterKey.data] = nil
        kept[ParameterKey.password] = nil
        kept[ParameterKey.passwordSource] = nil
        kept[ParameterKey.alias] = .string(alias)
        if merged[ParameterKey.storePassword] == nil && merged[ParameterKey.storePasswordSource] == nil {
            // The file's password protects the stored copy too: keep where it came from.
            if let source = try merged.string(ParameterKey.passwordSource), merged[ParameterKey.password] == nil {
                kept[ParameterKey.storePasswordSource] = .string(source)
            } else {
                kept[ParameterKey.storePassword] = .secret(storePassword)
            }
        }
        state.withLock {
            $0.parameters = kept
            $0.cache[cacheKey(store, alias)] = Cached(
                fileDigest: storedDigest,
                password: storePassword,
                identity: identity
            )
        }
        return identity
    }

    /// The identity stored under `alias`, unlocked with `storePassword`; nil when nothing is stored.
    /// Never prompts; keeps the unlocked identity in memory until the stored file changes.
    /// - Throws: `.passwordRequired` without `storePassword`, `.wrongPassword`, `.storeCorrupted`.
    public func storedCertificate() throws -> SigningIdentity? {
        let parameters = state.withLock { $0.parameters }
        if try parameters.boolean(ParameterKey.inMemory) == true { return state.withLock { $0.inMemoryIdentity } }
        let store = try makeStore(parameters)
        let alias = try PKCS12IdentityStore.validateAlias(
            try parameters.string(ParameterKey.alias) ?? Self.defaultAlias
        )
        guard let bytes = try store.pkcs12Data(alias: alias) else { return nil }
        guard
            let password = try resolveSecret(
                parameters,
                direct: ParameterKey.storePassword,
                source: ParameterKey.storePasswordSource
            )
        else {
            throw CertificateProviderError(
                .passwordRequired,
                "an identity is stored under '\(alias)'; set parameter 'storePassword' or 'storePasswordSource' to "
                    + "unlock it"
            )
        }
        let digest = DigestAlgorithm.sha256.hash(bytes)
        let key = cacheKey(store, alias)
        func cached() -> SigningIdentity? {
            guard let entry = state.withLock({ $0.cache[key] }), entry.fileDigest == digest, entry.password == password
            else { return nil }
            return entry.identity
        }
        if let identity = cached() { return identity }
        return try unlocking.withLock { _ in
            if let identity = cached() { return identity }  // another task unlocked it meanwhile
            state.withLock { $0.openCount += 1 }
            let identity = try PKCS12IdentityStore.unlock(bytes, alias: alias, password: password)
            state.withLock { $0.cache[key] = Cached(fileDigest: digest, password: password, identity: identity) }
            return identity
        }
    }

    /// Why there is no password for the stored copy: a file that opens without a password needs a
    /// `storePassword`; one that does not opens with its own password, which nobody gave.
    private static func missingStorePassword(_ bytes: [UInt8], password: Secret?) throws -> CertificateProviderError {
        if password == nil {
            do {
                _ = try PKCS12File(data: bytes, password: nil)
            } catch let error as CertificateProviderError
                where error.code == .wrongPassword || error.code == .passwordRequired
            {
                return CertificateProviderError(
                    .passwordRequired,
                    "the PKCS#12 file is protected by a password and none was given: set parameter 'password' (or "
                        + "'passwordSource'); it also protects the stored copy unless 'storePassword' is set"
                )
            }
        }
        return CertificateProviderError(
            .passwordRequired,
            "the stored copy needs a password: the file has none, so set parameter 'storePassword'"
        )
    }

    /// Removes the entry stored under `alias`; succeeds when there is none.
    /// - Throws: `.fileSystem` when removing fails.
    public func deleteStoredCertificate() throws {
        let parameters = state.withLock { state -> ProviderParameters in
            state.inMemoryIdentity = nil
            return state.parameters
        }
        if try parameters.boolean(ParameterKey.inMemory) == true { return }
        let store = try makeStore(parameters)
        let alias = try PKCS12IdentityStore.validateAlias(
            try parameters.string(ParameterKey.alias) ?? Self.defaultAlias
        )
        try store.delete(alias: alias)
        _ = state.withLock { $0.cache.removeValue(forKey: cacheKey(store, alias)) }
    }

    // MARK: Parameters

    /// The secret under `direct`, else the one `source` points at, else nil.
    private func resolveSecret(
        _ parameters: ProviderParameters,
        direct: ProviderParameters.Key,
        source: ProviderParameters.Key
    ) throws -> Secret? {
        if let secret = try parameters.secret(direct) { return secret }
        guard let specification = try parameters.string(source) else { return nil }
        return try PasswordSource(specification, key: source).read(environment: environment)
    }

    private func cacheKey(_ store: PKCS12IdentityStore, _ alias: String) -> String {
        store.directory.path + "\u{0}" + alias
    }

    private func makeStore(_ parameters: ProviderParameters) throws -> PKCS12IdentityStore {
        guard let directory = try PKCS12CertificateProvider.storeDirectory(parameters) else {
            // An app chooses where its identities live; the CLI's XDG default belongs to the CLI.
            throw CertificateProviderError.invalidParameter(
                "the PKCS#12 provider has no identity store: set the '\(ParameterKey.storeDirectory)' parameter "
                    + "(a directory of the app's choosing) or '\(ParameterKey.inMemory)' to store nothing"
            )
        }
        return PKCS12IdentityStore(directory: URL(fileURLWithPath: directory, isDirectory: true))
    }

    private static func storeDirectory(_ parameters: ProviderParameters) throws -> String? {
        guard let value = try parameters.string(ParameterKey.storeDirectory) else { return nil }
        return path(value)
    }

    private static func path(_ value: String) -> String {
        if value.hasPrefix("file://"), let url = URL(string: value), url.isFileURL { return url.path }
        return value
    }

    /// The checks of ``schema`` over several keys and over what a type cannot say (an alias the
    /// store accepts, a password source that parses, a store directory that is not a file).
    static func checkCombinations(_ parameters: ProviderParameters) throws {
        func nonEmptyString(_ key: ProviderParameters.Key) throws -> String? {
            guard let value = try parameters.string(key) else { return nil }
            guard !value.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw CertificateProviderError.invalidParameter("parameter '\(key)' must not be empty")
            }
            return value
        }
        if try nonEmptyString(ParameterKey.file) != nil, parameters[ParameterKey.data] != nil {
            throw CertificateProviderError.invalidParameter("parameters 'file' and 'data' exclude each other; give one")
        }
        if let data = try parameters.data(ParameterKey.data), data.isEmpty {
            throw CertificateProviderError.invalidParameter("parameter 'data' must not be empty")
        }
        if let alias = try parameters.string(ParameterKey.alias) {
            do { _ = try PKCS12IdentityStore.validateAlias(alias) } catch let error as CertificateProviderError {
                throw CertificateProviderError.invalidParameter("parameter 'alias': \(error.reason)")
            }
        }
        _ = try nonEmptyString(ParameterKey.keyAlias)
        if let directory = try nonEmptyString(ParameterKey.storeDirectory) {
            guard !directory.contains("\u{0}") else {
                throw CertificateProviderError.invalidParameter("parameter 'storeDirectory' must be a path")
            }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path(directory), isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                throw CertificateProviderError.invalidParameter(
                    "parameter 'storeDirectory': '\(directory)' exists and is not a directory"
                )
            }
        }
        for (direct, source) in [
            (ParameterKey.password, ParameterKey.passwordSource),
            (ParameterKey.storePassword, ParameterKey.storePasswordSource),
        ] {
            guard let specification = try parameters.string(source) else { continue }
            _ = try PasswordSource(specification, key: source)
            if parameters[direct] != nil {
                throw CertificateProviderError.invalidParameter(
                    "parameters '\(direct)' and '\(source)' exclude each other; give one"
                )
            }
        }
        if let storePassword = try parameters.secret(ParameterKey.storePassword), storePassword.isEmpty {
            throw CertificateProviderError.invalidParameter(
                "parameter 'storePassword' must not be empty (the stored key would be unprotected)"
            )
        }
    }
}

/// Where a password is read from: `env:NAME` or `file:PATH`, as `openssl -passin` spells them.
struct PasswordSource {
    enum Kind {
        case environment(String)
        case file(String)
    }
    let kind: Kind
    let key: ProviderParameters.Key

    /// Parses a specification.
    /// - Throws: `.invalidParameter` naming `key`.
    init(_ specification: String, key: ProviderParameters.Key) throws {
        self.key = key
        if specification.hasPrefix("env:"), specification.count > 4 {
            kind = .environment(String(specification.dropFirst(4)))
        } else if specification.hasPrefix("file:"), specification.count > 5 {
            kind = .file(String(specification.dropFirst(5)))
        } else {
            throw CertificateProviderError.invalidParameter("parameter '\(key)' must be env:NAME or file:PATH")
        }
    }

    /// Reads the password.
    /// - Throws: `.passwordRequired` when the variable is not set, `.fileSystem` when the file
    ///   cannot be read.
    func read(environment: [String: String]) throws -> Secret {
        switch kind {
        case .environment(let name):
            guard let value = environment[name] else {
                throw CertificateProviderError(
                    .passwordRequired,
                    "the environment variable \(name) named by '\(key)' is not set"
                )
            }
            return Secret(value)
        case .file(let path):
            guard var data = FileManager.default.contents(atPath: path) else {
                throw CertificateProviderError(.fileSystem, "cannot read the password file '\(path)' named by '\(key)'")
            }
            // A password file holds the password on its first line (Secret.firstLine, as the CLI reads it).
            let whole = Secret(wiping: &data)
            var bytes = whole.withUnsafeBytes { Array($0) }
            return Secret.firstLine(wiping: &bytes)
        }
    }
}
