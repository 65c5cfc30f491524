public import CertificateProviders
internal import Durability
public import Foundation

/// A directory of signing identities, one entry per alias: the identity as a PKCS#12 file whose
/// private key is encrypted with PBES2 / AES-256-CBC (never a plaintext key on disk) and its
/// certificate metadata as JSON, readable without the password for listing.
///
/// Entry format (``entryEncoding``): one PKCS#8 shrouded key bag, PBES2 with PBKDF2-HMAC-SHA256 at
/// 600 000 iterations and AES-256-CBC; the certificate bags in the clear (certificates are public,
/// and `identity list` shows them without a password anyway); no password-based MAC. Unlocking costs
/// ONE key derivation, and each password guess still costs an attacker the full 600 000 iterations:
/// a MAC would either cost a second derivation of the same size or, with fewer iterations, give the
/// attacker a cheaper oracle to test guesses against. (OpenSSL 3.0 has no PBMAC1, the only PKCS#12
/// MAC that could share a derivation with the key.) Without a MAC, integrity comes from the key
/// itself: the decrypted PKCS#8 must decode and its public key must be the leaf certificate's, or
/// the unlock fails; an entry whose key is not encrypted is refused as `.storeCorrupted` (so no one
/// who can write the directory can slip in a key of their own without knowing the password). A
/// changed certificate fails to decode or no longer matches the key (`.storeCorrupted`); changed key
/// ciphertext cannot be told from a wrong password and reports `.wrongPassword`. What stays possible
/// for someone who can write the private (0700, checked) directory is replacing a certificate by
/// another certificate over the same public key; that person could as well replace the program.
/// Such a file opens in other tools: `openssl pkcs12 -in identity.p12 -info -noout`. Entries written
/// before this format (certificates encrypted and a SHA-256 MAC, three derivations) still open.
///
/// Layout (directories the store creates are 0700, files 0600; an existing `<directory>` keeps its
/// mode, `identities` is always tightened to 0700):
/// ```
/// <directory>/identities/.lock                   flock(2) taken by every change
/// <directory>/identities/<alias>/identity.p12
/// <directory>/identities/<alias>/metadata.json
/// ```
/// Every change is atomic and safe across processes: an entry is written completely into a hidden
/// temporary directory (each file created with `O_EXCL`, written and `fsync`ed, then the directory
/// `fsync`ed) and appears by one `rename(2)`; it disappears by one `rename(2)` to a hidden name before
/// it is removed; a replacement swaps the new entry with the old one by one `renameat2(RENAME_EXCHANGE)`.
/// A crash leaves the old entry or the new one plus hidden leftovers, which readers ignore and the
/// next change cleans up. Changes are serialised by an exclusive `flock(2)` on
/// `identities/.lock`, so two processes importing the same alias give one success and one `.alreadyExists`.
///
/// A value type holding only the directory: make as many as you like, in as many processes.
public struct PKCS12IdentityStore: Sendable {
    /// What the store knows about an entry without its password.
    public struct Metadata: Sendable, Codable, Hashable {
        /// The entry's alias.
        public let alias: String
        /// The leaf certificate's subject (RFC 2253, UTF-8).
        public let subject: String
        /// The leaf certificate's issuer.
        public let issuer: String
        /// The leaf certificate's serial number in hex.
        public let serialNumber: String
        /// Start of the leaf certificate's validity.
        public let notValidBefore: Date
        /// End of the leaf certificate's validity.
        public let notValidAfter: Date
        /// SHA-256 of the leaf certificate, colon-separated hex.
        public let sha256Fingerprint: String
        /// The key algorithm (`RSA`, `EC P-256`, …).
        public let keyAlgorithm: String
        /// The key size in bits.
        public let keySize: Int
        /// The number of chain certificates stored above the leaf.
        public let chainLength: Int
        /// When the entry was written.
        public let createdAt: Date
        /// The metadata format version (1).
        public let formatVersion: Int

        /// Describes `identity` stored under `alias` at `createdAt`.
        public init(alias: String, identity: SigningIdentity, createdAt: Date = Date()) {
            let certificate = identity.certificate
            self.alias = alias
            subject = certificate.subject
            issuer = certificate.issuer
            serialNumber = certificate.serialNumber
            notValidBefore = certificate.notValidBefore
            notValidAfter = certificate.notValidAfter
            sha256Fingerprint = certificate.sha256FingerprintHex
            keyAlgorithm = identity.key.publicKeyAlgorithm.rawValue
            keySize = identity.key.keySize
            chainLength = identity.chain.count
            self.createdAt = Date(timeIntervalSince1970: createdAt.timeIntervalSince1970.rounded(.down))
            formatVersion = 1
        }
    }

    /// The store's directory.
    public let directory: URL

    /// How entries written from now on are protected: the key with PBES2, PBKDF2-HMAC-SHA256 at
    /// 600 000 iterations (OWASP's 2023 figure) and AES-256-CBC; the certificates in the clear; no MAC
    /// (see the type's documentation for why): one key derivation per unlock. Entries written by older
    /// versions (certificates encrypted, a SHA-256 MAC, or fewer iterations) still open.
    public static let entryEncoding = PKCS12File.EncodingOptions(
        iterations: 600_000,
        macIterations: 600_000,
        encryptsCertificates: false,
        includesMAC: false
    )

    /// The shortest store password accepted for a new entry, in characters.
    public static let minimumPasswordLength = 8

    /// Refuses a store password for a new entry that is empty or shorter than ``minimumPasswordLength``.
    /// - Throws: `.passwordRequired` for an empty password, `.invalidParameter` for a short one.
    public static func checkNewStorePassword(_ password: Secret) throws {
        guard !password.isEmpty else {
            throw CertificateProviderError(
                .passwordRequired,
                "the stored copy needs a store password of at least \(minimumPasswordLength) characters"
            )
        }
        let characters = password.withUnsafeBytes { String(decoding: $0, as: UTF8.self).count }
        guard characters >= minimumPasswordLength else {
            throw CertificateProviderError.invalidParameter(
                "a store password needs at least \(minimumPasswordLength) characters (this one has \(characters)); "
                    + "choose a longer one"
            )
        }
    }

    /// The longest alias accepted, in UTF-8 bytes (names stay well under the 255-byte file-name limit).
    public static let maximumAliasLength = 200

    /// Creates a store over `directory`; nothing is created until the first write.
    public init(directory: URL) {
        self.directory = directory.standardizedFileURL
    }

    /// Checks an alias and returns its normalised (NFC) form.
    ///
    /// Accepted: 1 to ``maximumAliasLength`` UTF-8 bytes, any script (Cyrillic included); rejected:
    /// `/`, `\`, control characters, a leading `.` (so `.` and `..` too), `..` anywhere, and leading
    /// or trailing white space.
    /// - Throws: `.invalidParameter` saying what is wrong.
    public static func validateAlias(_ alias: String) throws -> String {
        let normalized = alias.precomposedStringWithCanonicalMapping
        func reject(_ why: String) -> CertificateProviderError {
            .invalidParameter(
                "alias '\(alias.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : String($0) }.joined())' is not allowed: \(why)"
            )
        }
        guard !normalized.isEmpty else {
            throw CertificateProviderError.invalidParameter("the alias must not be empty")
        }
        guard normalized.utf8.count <= maximumAliasLength else {
            throw reject("longer than \(maximumAliasLength) UTF-8 bytes")
        }
        guard !normalized.contains("/"), !normalized.contains("\\") else { throw reject("it contains a slash") }
        guard !normalized.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.value == 0 })
        else {
            throw reject("it contains control characters")
        }
        guard !normalized.hasPrefix("."), !normalized.contains("..") else {
            throw reject("it starts with '.' or contains '..'")
        }
        guard normalized.trimmingCharacters(in: .whitespacesAndNewlines) == normalized else {
            throw reject("it starts or ends with white space")
        }
        return normalized
    }

    // MARK: Writing

    /// Stores an identity under `alias`, encrypted with `storePassword`.
    ///
    /// - Parameters:
    ///   - identity: an identity with a ``LocalSigningKey``.
    ///   - alias: the entry name (see ``validateAlias(_:)``).
    ///   - storePassword: protects the stored copy; at least ``minimumPasswordLength`` characters.
    ///   - replacingExisting: replace an entry of the same alias atomically instead of failing.
    ///   - options: the PKCS#12 protection (default ``entryEncoding``).
    /// - Returns: the entry's metadata.
    /// - Throws: `.alreadyExists` when the alias is taken (and `replacingExisting` is false),
    ///   `.invalidParameter` (also for a store password shorter than ``minimumPasswordLength``),
    ///   `.passwordRequired` for an empty password, `.fileSystem` (also for a store directory another
    ///   user owns or may write in).
    @discardableResult
    public func `import`(
        _ identity: SigningIdentity,
        alias: String,
        storePassword: Secret,
        replacingExisting: Bool = false,
        options: PKCS12File.EncodingOptions = PKCS12IdentityStore.entryEncoding
    ) throws -> Metadata {
        let alias = try PKCS12IdentityStore.validateAlias(alias)
        try PKCS12IdentityStore.checkNewStorePassword(storePassword)
        let pkcs12 = try PKCS12File.encode(identity, password: storePassword, friendlyName: alias, options: options)
        let metadata = Metadata(alias: alias, identity: identity)
        let json = try PKCS12IdentityStore.encoder.encode(metadata)
        try withLock {
            try write(entry: alias, pkcs12: pkcs12, metadata: Array(json), replacingExisting: replacingExisting)
        }
        return metadata
    }

    /// Imports a PKCS#12 file's identity under `alias`, re-encrypted with PBES2 / AES-256.
    ///
    /// - Parameters:
    ///   - pkcs12Data: the file's bytes.
    ///   - password: the file's password (nil when it has none).
    ///   - keyAlias: which key of the file to take (friendly name or hex local key ID); nil takes
    ///     the only key, or the key named `alias` when the file holds several.
    ///   - alias: the entry name.
    ///   - storePassword: protects the stored copy; nil uses `password`.
    ///   - replacingExisting: replace an entry of the same alias instead of failing.
    /// - Returns: the stored identity and its metadata.
    /// - Throws: whatever opening the file throws (`.wrongPassword`, `.malformedInput`, …), then
    ///   what ``import(_:alias:storePassword:replacingExisting:options:)`` throws.
    @discardableResult
    public func `import`(
        pkcs12Data: [UInt8],
        password: Secret?,
        keyAlias: String? = nil,
        alias: String,
        storePassword: Secret? = nil,
        replacingExisting: Bool = false
    ) throws -> (identity: SigningIdentity, metadata: Metadata) {
        let alias = try PKCS12IdentityStore.validateAlias(alias)
        let file = try PKCS12File(data: pkcs12Data, password: password)
        let identity = try file.identity(alias: keyAlias ?? (file.keys.count > 1 ? alias : nil))
        guard let protection = storePassword ?? password, !protection.isEmpty else {
            throw CertificateProviderError(
                .passwordRequired,
                "the stored copy needs a store password of at least \(PKCS12IdentityStore.minimumPasswordLength) "
                    + "characters: the file has none, so give a store password"
            )
        }
        let metadata = try self.import(
            identity,
            alias: alias,
            storePassword: protection,
            replacingExisting: replacingExisting
        )
        return (identity, metadata)
    }

    /// Removes the entry `alias`.
    /// - Returns: whether an entry was removed (false when there was none).
    /// - Throws: `.invalidParameter` for a bad alias, `.fileSystem`.
    @discardableResult
    public func delete(alias: String) throws -> Bool {
        let alias = try PKCS12IdentityStore.validateAlias(alias)
        guard FileManager.default.fileExists(atPath: identitiesDirectory.path) else { return false }
        return try withLock {
            let entry = entryDirectory(alias)
            guard FileSystem.exists(entry.path) else { return false }
            let trash = identitiesDirectory.appendingPathComponent(".deleted-\(UUID().uuidString)")
            try FileSystem.rename(entry.path, trash.path)
            try FileSystem.syncDirectory(identitiesDirectory.path)
            try? FileManager.default.removeItem(at: trash)
            return true
        }
    }

    // MARK: Reading

    /// The metadata of every readable entry, sorted by alias; needs no password.
    ///
    /// Hidden leftovers of interrupted writes are ignored; an entry whose metadata cannot be read is
    /// left out (``metadata(alias:)`` reports it as `.storeCorrupted`).
    /// - Throws: `.fileSystem` when the directory exists but cannot be read.
    public func list() throws -> [Metadata] {
        let names: [String]
        try checkDirectories()
        do {
            guard FileManager.default.fileExists(atPath: identitiesDirectory.path) else { return [] }
            names = try FileManager.default.contentsOfDirectory(atPath: identitiesDirectory.path)
        } catch {
            throw CertificateProviderError(
                .fileSystem,
                "cannot list the identity store '\(directory.path)': \(PKCS12File.describe(error))"
            )
        }
        return names.filter { !$0.hasPrefix(".") }
            .compactMap { try? metadata(alias: $0) }
            .sorted { $0.alias < $1.alias }
    }

    /// The metadata of `alias`, or nil when nothing is stored under it.
    /// - Throws: `.storeCorrupted` when the entry exists but its metadata is unreadable.
    public func metadata(alias: String) throws -> Metadata? {
        let alias = try PKCS12IdentityStore.validateAlias(alias)
        try checkDirectories()
        let entry = entryDirectory(alias)
        guard FileSystem.exists(entry.path) else { return nil }
        guard let bytes = FileSystem.read(entry.appendingPathComponent(PKCS12IdentityStore.metadataName).path),
            let metadata = try? PKCS12IdentityStore.decoder.decode(Metadata.self, from: Data(bytes))
        else {
            throw CertificateProviderError(
                .storeCorrupted,
                "the metadata of '\(alias)' in '\(directory.path)' is missing or unreadable; delete the entry and "
                    + "import it again"
            )
        }
        return metadata
    }

    /// Whether an entry named `alias` exists.
    public func contains(alias: String) -> Bool {
        guard let alias = try? PKCS12IdentityStore.validateAlias(alias) else { return false }
        return FileSystem.exists(entryDirectory(alias).path)
    }

    /// The stored (encrypted) PKCS#12 bytes of `alias`, or nil when nothing is stored.
    /// - Throws: `.storeCorrupted` when the entry exists without its PKCS#12 file.
    public func pkcs12Data(alias: String) throws -> [UInt8]? {
        let alias = try PKCS12IdentityStore.validateAlias(alias)
        try checkDirectories()
        let entry = entryDirectory(alias)
        guard FileSystem.exists(entry.path) else { return nil }
        guard let bytes = FileSystem.read(entry.appendingPathComponent(PKCS12IdentityStore.pkcs12Name).path) else {
            throw CertificateProviderError(
                .storeCorrupted,
                "the entry '\(alias)' in '\(directory.path)' has no readable PKCS#12 file; delete it and import it "
                    + "again"
            )
        }
        return bytes
    }

    /// Unlocks the identity stored under `alias`.
    /// - Parameters:
    ///   - alias: the entry name.
    ///   - password: the store password it was stored with.
    /// - Throws: `.notStored` when nothing is stored under `alias`, `.passwordRequired` when
    ///   `password` is nil, `.wrongPassword`, `.storeCorrupted` when the stored file is damaged.
    public func identity(alias: String, password: Secret?) throws -> SigningIdentity {
        guard let bytes = try pkcs12Data(alias: alias) else {
            throw CertificateProviderError(
                .notStored,
                "nothing is stored under the alias '\(alias)' in '\(directory.path)'"
            )
        }
        return try PKCS12IdentityStore.unlock(bytes, alias: alias, password: password)
    }

    /// Writes the identity of `alias` to a new PKCS#12 file that other tools open, protected by
    /// `exportPassword` (PBES2 / AES-256, SHA-256 MAC).
    /// - Parameters:
    ///   - alias: the entry name.
    ///   - password: the store password.
    ///   - exportPassword: the new file's password (non-empty).
    ///   - path: where to write; the file is created with mode 0600 and must not exist yet.
    /// - Throws: what ``identity(alias:password:)`` throws, `.alreadyExists` when `path` exists,
    ///   `.fileSystem`.
    public func export(alias: String, password: Secret?, exportPassword: Secret, to path: String) throws {
        let identity = try identity(alias: alias, password: password)
        let alias = try PKCS12IdentityStore.validateAlias(alias)
        let bytes = try PKCS12File.encode(identity, password: exportPassword, friendlyName: alias)
        let destination = URL(fileURLWithPath: path)
        let temporary = destination.deletingLastPathComponent().appendingPathComponent(
            ".\(destination.lastPathComponent).tmp-\(UUID().uuidString)"
        )
        try FileSystem.writeNewFile(temporary.path, bytes)
        do {
            try FileSystem.link(temporary.path, destination.path)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        try? FileManager.default.removeItem(at: temporary)
        try? FileSystem.syncDirectory(destination.deletingLastPathComponent().path)
    }

    static func unlock(_ bytes: [UInt8], alias: String, password: Secret?) throws -> SigningIdentity {
        guard let password else {
            throw CertificateProviderError(
                .passwordRequired,
                "the identity '\(alias)' is encrypted; give the store password to unlock it"
            )
        }
        do {
            let file = try PKCS12File(data: bytes, password: password)
            // Without a MAC, the encrypted key is what proves the entry was written with this
            // password: an entry with a key in the clear is refused, whatever else it holds.
            guard file.protection.plaintextKeyCount == 0, !file.protection.keyEncryption.isEmpty else {
                throw CertificateProviderError(
                    .storeCorrupted,
                    "the stored identity '\(alias)' holds a private key that is not encrypted; the store never writes "
                        + "that, so the entry was altered: delete it and import the identity again"
                )
            }
            return try file.identity()
        } catch let error as CertificateProviderError
            where error.code == .wrongPassword || error.code == .passwordRequired
        {
            throw CertificateProviderError(.wrongPassword, "the store password does not unlock the identity '\(alias)'")
        } catch let error as CertificateProviderError
            where error.code == .malformedInput || error.code == .noPrivateKey || error.code == .keyCertificateMismatch
        {
            throw CertificateProviderError(
                .storeCorrupted,
                "the stored identity '\(alias)' is damaged (\(error.reason)); delete it and import it again",
                openSSLErrors: error.openSSLErrors
            )
        }
    }

    // MARK: Layout and atomic writes

    static let pkcs12Name = "identity.p12"
    static let metadataName = "metadata.json"

    var identitiesDirectory: URL { directory.appendingPathComponent("identities", isDirectory: true) }

    func entryDirectory(_ alias: String) -> URL { identitiesDirectory.appendingPathComponent(alias, isDirectory: true) }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// Runs `body` holding the store's exclusive lock, after creating the directories (0700) and
    /// cleaning up what interrupted changes left behind.
    func withLock<R>(_ body: () throws -> R) throws -> R {
        try checkDirectories()
        try FileSystem.makePrivateDirectory(directory.path)
        try FileSystem.makePrivateDirectory(identitiesDirectory.path, tighteningExisting: true)
        let lock = try FileSystem.Lock(path: identitiesDirectory.appendingPathComponent(".lock").path)
        defer { lock.release() }
        recoverInterruptedChanges()
        return try body()
    }

    /// Refuses a store directory or `identities/` that another user owns or may write in
    /// (`.fileSystem`, saying how to fix it).
    func checkDirectories() throws {
        try FileSystem.checkPrivateDirectory(directory.path, what: "the identity store")
        try FileSystem.checkPrivateDirectory(identitiesDirectory.path, what: "the identity store's folder")
    }

    /// Removes temporary and deleted leftovers; puts back an entry that a replacement moved aside
    /// but did not replace.
    func recoverInterruptedChanges() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: identitiesDirectory.path) else { return }
        for name in names where name.hasPrefix(".") {
            let url = identitiesDirectory.appendingPathComponent(name)
            if name.hasPrefix(".replaced-"),
                let bytes = FileSystem.read(url.appendingPathComponent(PKCS12IdentityStore.metadataName).path),
                let metadata = try? PKCS12IdentityStore.decoder.decode(Metadata.self, from: Data(bytes)),
                (try? PKCS12IdentityStore.validateAlias(metadata.alias)) != nil,
                !FileSystem.exists(entryDirectory(metadata.alias).path),
                (try? FileSystem.rename(url.path, entryDirectory(metadata.alias).path)) != nil
            {
                continue
            }
            if name.hasPrefix(".tmp-") || name.hasPrefix(".deleted-") || name.hasPrefix(".replaced-") {
                try? FileManager.default.removeItem(at: url)
            }
        }
        try? FileSystem.syncDirectory(identitiesDirectory.path)
    }

    /// Writes an entry into a temporary directory and renames it into place (caller holds the lock).
    private func write(entry alias: String, pkcs12: [UInt8], metadata: [UInt8], replacingExisting: Bool) throws {
        let final = entryDirectory(alias)
        if !replacingExisting && FileSystem.exists(final.path) {
            throw CertificateProviderError(
                .alreadyExists,
                "an identity is already stored under the alias '\(alias)'; delete it first or choose another alias"
            )
        }
        let temporary = identitiesDirectory.appendingPathComponent(".tmp-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileSystem.makePrivateDirectory(temporary.path)
            try FileSystem.writeNewFile(temporary.appendingPathComponent(PKCS12IdentityStore.pkcs12Name).path, pkcs12)
            try FileSystem.writeNewFile(
                temporary.appendingPathComponent(PKCS12IdentityStore.metadataName).path,
                metadata
            )
            try FileSystem.syncDirectory(temporary.path)
            if FileSystem.exists(final.path) {
                // Swap the new entry with the old one in one step, so readers and a crash see the old
                // entry or the new one, never none; the old one is then under the temporary name,
                // which recovery removes if this process dies before it does.
                if try FileSystem.exchange(temporary.path, with: final.path) {
                    try FileSystem.syncDirectory(identitiesDirectory.path)
                    try? FileManager.default.removeItem(at: temporary)
                    return
                }
                // The file system cannot exchange: move the old entry aside, then the new one in.
            }
            var replaced: URL?
            if FileSystem.exists(final.path) {
                let aside = identitiesDirectory.appendingPathComponent(
                    ".replaced-\(UUID().uuidString)",
                    isDirectory: true
                )
                try FileSystem.rename(final.path, aside.path)
                replaced = aside
            }
            do {
                try FileSystem.rename(temporary.path, final.path)
            } catch let error as CertificateProviderError {
                if let replaced { try? FileSystem.rename(replaced.path, final.path) }
                if error.code == .alreadyExists {
                    throw CertificateProviderError(
                        .alreadyExists,
                        "an identity is already stored under the alias '\(alias)'"
                    )
                }
                throw error
            }
            try FileSystem.syncDirectory(identitiesDirectory.path)
            if let replaced { try? FileManager.default.removeItem(at: replaced) }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }
}
