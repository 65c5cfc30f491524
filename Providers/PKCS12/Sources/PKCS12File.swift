public import CertificateProviders
import Foundation

/// A PKCS#12 (`.p12` / `.pfx`) file opened with its password: every private key with its friendly
/// name and local key ID, every certificate, and how the file is protected.
///
/// Reads what real tools write: OpenSSL 3 (`openssl pkcs12 -export`, with or without `-legacy`,
/// `-nomac`, `-keypbe NONE`), JDK `keytool` (default PBES2 and `keystore.pkcs12.legacy`), Python
/// `cryptography`, and Windows exports (RC2-40 / 3DES with a SHA-1 MAC). OpenSSL's `legacy` provider
/// is loaded together with `default` when needed, without the caller having to know.
///
/// Passwords are used as UTF-8, as OpenSSL 3, Python and Java encode them; the empty password and
/// the absent password (which OpenSSL tells apart) are both tried when either is given, and a
/// non-ASCII password is also tried in the form OpenSSL 1.0 used to write.
///
/// ```swift
/// let file = try PKCS12File(contentsOf: "/home/me/signer.p12", password: Secret("…"))
/// let identity = try file.identity()            // leaf matching the key, chain leaf → root
/// let other = try file.identity(alias: "backup") // by friendly name or hex local key ID
/// ```
///
/// Errors: `.wrongPassword` (or `.passwordRequired` when no password was given and one is needed),
/// `.malformedInput` for anything that is not an intact PKCS#12 (truncated, corrupt, another format,
/// modified after writing), `.unsupportedAlgorithm` naming the algorithm OpenSSL cannot run, and
/// `.fileSystem` when the file cannot be read. Key selection errors come from ``identity(alias:)``.
public struct PKCS12File: Sendable {
    /// One private key of the file with its attributes and, when there is one, its certificate.
    public struct KeyEntry: Sendable, CustomStringConvertible {
        /// The private key.
        public let key: LocalSigningKey
        /// The key bag's `friendlyName` attribute (the "alias" in Java and Windows), or the friendly
        /// name of its certificate when the key bag has none; nil when neither has one.
        public let friendlyName: String?
        /// The `localKeyID` attribute that ties the key to its certificate, or nil.
        public let localKeyID: [UInt8]?
        /// The certificate whose public key is this key's public half, or nil when none matches.
        public let certificate: Certificate?

        /// ``localKeyID`` as upper-case hex, or nil.
        public var localKeyIDHex: String? { localKeyID.map { HexText.uppercase($0) } }

        /// The name used in messages and listings: the friendly name, else the hex local key ID.
        public var displayName: String { friendlyName ?? localKeyIDHex.map { "localKeyID:\($0)" } ?? "(unnamed key)" }

        /// A one-line summary without key material.
        public var description: String {
            "KeyEntry(\(displayName), \(key.publicKeyAlgorithm), certificate: \(certificate?.subject ?? "none"))"
        }
    }

    /// An encryption or integrity algorithm as the file names it.
    public struct Algorithm: Sendable, Hashable, CustomStringConvertible {
        /// OpenSSL's long name (`PBES2`, `pbeWithSHA1And40BitRC2-CBC`, `sha256`), or the dotted OID.
        public let name: String
        /// The dotted OID.
        public let oid: String
        /// For PBES2: the cipher's short name (`AES-256-CBC`); nil otherwise.
        public let cipher: String?
        /// For PBES2: the PBKDF2 pseudo-random function (`hmacWithSHA256`); nil otherwise.
        public let pseudoRandomFunction: String?
        /// The key-derivation iteration count, when the parameters carry one.
        public let iterations: Int?

        /// Creates a description (used by the parser).
        public init(
            name: String,
            oid: String,
            cipher: String? = nil,
            pseudoRandomFunction: String? = nil,
            iterations: Int? = nil
        ) {
            self.name = name
            self.oid = oid
            self.cipher = cipher
            self.pseudoRandomFunction = pseudoRandomFunction
            self.iterations = iterations
        }

        /// `name (PBKDF2-prf, cipher, N iterations)`.
        public var description: String {
            var parts: [String] = []
            if let pseudoRandomFunction { parts.append("PBKDF2-\(pseudoRandomFunction)") }
            if let cipher { parts.append(cipher) }
            if let iterations { parts.append("\(iterations) iterations") }
            return parts.isEmpty ? name : "\(name) (\(parts.joined(separator: ", ")))"
        }
    }

    /// How the file is protected.
    public struct Protection: Sendable {
        /// The MAC digest (`sha256`, `sha1`), nil when the file has no MAC.
        public let macAlgorithm: Algorithm?
        /// The MAC key-derivation iteration count, nil when there is no MAC.
        public let macIterations: Int?
        /// Whether the password checked the MAC (false when the file has none).
        public let isMACVerified: Bool
        /// The encryption of each shrouded key bag, in file order (empty when keys are stored plain).
        public let keyEncryption: [Algorithm]
        /// The encryption of each encrypted certificate safe, in file order (empty when plain).
        public let contentEncryption: [Algorithm]
        /// The number of private keys stored without encryption (plain `keyBag`s).
        public let plaintextKeyCount: Int
    }

    /// Every private key, in file order.
    public let keys: [KeyEntry]
    /// Every X.509 certificate, in file order.
    public let certificates: [Certificate]
    /// The file's protection.
    public let protection: Protection

    /// The largest input accepted (16 MiB); real PKCS#12 identities are a few kilobytes.
    public static let maximumSize = 16 * 1_048_576

    /// The largest key-derivation iteration count accepted (3 000 000), for one derivation and for
    /// all derivations of one open together (the MAC, each encrypted part and each key, for each
    /// password form tried). Tools write 2 000 to 600 000 per derivation; 3 000 000 iterations
    /// already cost about a second of CPU, so a file asking for more is refused as
    /// `.malformedInput` before the derivation that would pass the limit runs.
    public static let maximumIterations = 3_000_000

    /// Opens PKCS#12 bytes.
    /// - Parameters:
    ///   - data: the DER (or BER) PKCS#12 bytes.
    ///   - password: the file's password; nil for "no password" (the empty and the absent password
    ///     are both tried).
    /// - Throws: `.wrongPassword`, `.passwordRequired`, `.malformedInput`, `.unsupportedAlgorithm`.
    public init(data: [UInt8], password: Secret?) throws {
        self = try PKCS12Parser.parse(data, password: password)
    }

    /// Opens a PKCS#12 file.
    /// - Parameters:
    ///   - path: the file's path.
    ///   - password: the file's password; nil for "no password".
    /// - Throws: `.fileSystem` when the file cannot be read, `.malformedInput` when it is larger than
    ///   ``maximumSize``, and everything ``init(data:password:)`` throws.
    public init(contentsOf path: String, password: Secret?) throws {
        self = try PKCS12File(data: PKCS12File.readFile(path), password: password)
    }

    init(keys: [KeyEntry], certificates: [Certificate], protection: Protection) {
        self.keys = keys
        self.certificates = certificates
        self.protection = protection
    }

    /// The names of the keys (friendly name, else hex local key ID), in file order.
    public var aliases: [String] { keys.map(\.displayName) }

    /// The signing identity of one key: its certificate and the chain above it.
    ///
    /// The leaf is the certificate whose public key is the key's; the chain follows issuer names
    /// (and signatures) from the leaf upwards through the file's other certificates, issuer first,
    /// root last. Certificates that are not on that path are left out (they stay in
    /// ``certificates``).
    ///
    /// - Parameter alias: a key's friendly name (exact, then case-insensitive) or its local key ID
    ///   in hex; nil when the file holds one key. When the file holds exactly one key, an alias that
    ///   names nothing is ignored only if the key has no name at all.
    /// - Throws: `.noPrivateKey` when the file holds no key; `.invalidParameter` listing the
    ///   choices when `alias` is nil and there are several keys, or when it names none of them;
    ///   `.keyCertificateMismatch` when the key matches none of the certificates.
    public func identity(alias: String? = nil) throws -> SigningIdentity {
        let entry = try selectKey(alias: alias)
        guard let leaf = entry.certificate else {
            let what =
                certificates.isEmpty
                ? "the file holds no certificate at all"
                : "it matches none of the \(certificates.count) certificate(s) in the file "
                    + "(\(certificates.map(\.subject).joined(separator: "; ")))"
            throw CertificateProviderError(
                .keyCertificateMismatch,
                "the private key '\(entry.displayName)' has no certificate: \(what); export the file again with the "
                    + "key's certificate"
            )
        }
        return SigningIdentity(
            certificate: leaf,
            chain: PKCS12File.chain(above: leaf, in: certificates),
            key: entry.key
        )
    }

    /// The key entry `alias` selects (see ``identity(alias:)``).
    /// - Throws: `.noPrivateKey`, `.invalidParameter`.
    public func selectKey(alias: String?) throws -> KeyEntry {
        guard !keys.isEmpty else {
            throw CertificateProviderError(
                .noPrivateKey,
                "the PKCS#12 file holds no private key (\(certificates.count) certificate(s) only); export it again "
                    + "including the private key"
            )
        }
        let choices = keys.map { "'\($0.displayName)'" }.joined(separator: ", ")
        guard let alias, !alias.isEmpty else {
            guard keys.count == 1 else {
                throw CertificateProviderError.invalidParameter(
                    "the PKCS#12 file holds \(keys.count) private keys; choose one by its alias (friendly name or "
                        + "local key ID): \(choices)"
                )
            }
            return keys[0]
        }
        let exact = keys.filter { $0.friendlyName == alias }
        if exact.count == 1 { return exact[0] }
        let folded = keys.filter { $0.friendlyName?.lowercased() == alias.lowercased() }
        if exact.isEmpty, folded.count == 1 { return folded[0] }
        let byID = keys.filter {
            $0.localKeyIDHex?.caseInsensitiveCompare(alias.replacingOccurrences(of: ":", with: "")) == .orderedSame
        }
        if exact.isEmpty, folded.isEmpty, byID.count == 1 { return byID[0] }
        if exact.count > 1 || folded.count > 1 || byID.count > 1 {
            throw CertificateProviderError.invalidParameter(
                "several private keys in the PKCS#12 file are named '\(alias)'; the file holds: \(choices)"
            )
        }
        if keys.count == 1, keys[0].friendlyName == nil, keys[0].localKeyID == nil { return keys[0] }
        throw CertificateProviderError.invalidParameter(
            "no private key in the PKCS#12 file is named '\(alias)'; the file holds: \(choices)"
        )
    }

    /// Orders the issuers of `leaf` found in `pool`: issuer first, root last.
    static func chain(above leaf: Certificate, in pool: [Certificate]) -> [Certificate] {
        var chain: [Certificate] = []
        var current = leaf
        var used: Set<Certificate> = [leaf]
        while !current.isSelfIssued, chain.count < 16 {
            let candidates = pool.filter { !used.contains($0) && PKCS12Parser.issued(current, by: $0) }
            guard
                let issuer = candidates.first(where: { PKCS12Parser.signatureVerifies(current, by: $0) })
                    ?? candidates.first
            else { break }
            chain.append(issuer)
            used.insert(issuer)
            current = issuer
        }
        return chain
    }

    static func readFile(_ path: String) throws -> [UInt8] {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw CertificateProviderError(
                .fileSystem,
                "cannot read the PKCS#12 file '\(path)': \(PKCS12File.describe(error))"
            )
        }
        if let type = attributes[.type] as? FileAttributeType, type == .typeDirectory {
            throw CertificateProviderError(.fileSystem, "'\(path)' is a directory, not a PKCS#12 file")
        }
        if let size = attributes[.size] as? NSNumber, size.intValue > maximumSize {
            throw CertificateProviderError.malformedInput(
                "'\(path)' is \(size.intValue / 1_048_576) MiB; a PKCS#12 identity is a few kilobytes (at most "
                    + "\(maximumSize / 1_048_576) MiB accepted): this is not a PKCS#12 file"
            )
        }
        do {
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw CertificateProviderError(
                .fileSystem,
                "cannot read the PKCS#12 file '\(path)': \(PKCS12File.describe(error))"
            )
        }
    }

    static func describe(_ error: any Error) -> String {
        if let cocoa = error as? CocoaError, let underlying = cocoa.userInfo[NSUnderlyingErrorKey] as? NSError,
            underlying.domain == NSPOSIXErrorDomain
        {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if let cocoa = error as? CocoaError {
            switch cocoa.code {
            case .fileReadNoSuchFile, .fileNoSuchFile: return "no such file"
            case .fileReadNoPermission: return "permission denied"
            default: break
            }
        }
        return (error as NSError).localizedDescription
    }
}
