public import Foundation
internal import OpenSSLWrappers

/// A message digest algorithm: the closed set of digests this package signs with
/// (``allSupported``).
///
/// The set is closed because every member needs an OpenSSL implementation and an OID the verifier
/// accepts; a name outside it (``init(name:)``) is `nil`, never a silent fallback to SHA-256.
public struct DigestAlgorithm: Hashable, Sendable, CustomStringConvertible {
    /// The lower-case name (`sha256`), as on command lines and in OpenSSL.
    public let rawValue: String
    /// The digest length in bytes.
    public let outputByteCount: Int
    /// The dotted OID.
    public let oid: String

    /// A readable name: `SHA-256`, `GOST R 34.11-2012 256` (Streebog).
    public let displayName: String

    private init(_ rawValue: String, outputByteCount: Int, oid: String, displayName: String) {
        self.rawValue = rawValue
        self.outputByteCount = outputByteCount
        self.oid = oid
        self.displayName = displayName
    }

    /// The lower-case name (`sha256`).
    public var description: String { rawValue }

    /// SHA-256 (FIPS 180-4), the default for RSA and EC keys.
    public static let sha256 = DigestAlgorithm(
        "sha256",
        outputByteCount: 32,
        oid: "2.16.840.1.101.3.4.2.1",
        displayName: "SHA-256"
    )
    /// SHA-384 (FIPS 180-4).
    public static let sha384 = DigestAlgorithm(
        "sha384",
        outputByteCount: 48,
        oid: "2.16.840.1.101.3.4.2.2",
        displayName: "SHA-384"
    )
    /// SHA-512 (FIPS 180-4).
    public static let sha512 = DigestAlgorithm(
        "sha512",
        outputByteCount: 64,
        oid: "2.16.840.1.101.3.4.2.3",
        displayName: "SHA-512"
    )
    /// GOST R 34.11-2012 with a 256-bit hash (Streebog-256), the digest of GOST R 34.10-2012 256-bit
    /// keys. Needs the gost engine (``GOSTEngine``).
    public static let streebog256 = DigestAlgorithm(
        "streebog256",
        outputByteCount: 32,
        oid: "1.2.643.7.1.1.2.2",
        displayName: "GOST R 34.11-2012 256"
    )
    /// GOST R 34.11-2012 with a 512-bit hash (Streebog-512), the digest of GOST R 34.10-2012 512-bit
    /// keys. Needs the gost engine (``GOSTEngine``).
    public static let streebog512 = DigestAlgorithm(
        "streebog512",
        outputByteCount: 64,
        oid: "1.2.643.7.1.1.2.3",
        displayName: "GOST R 34.11-2012 512"
    )

    /// Every supported digest.
    public static let allSupported: [DigestAlgorithm] = [.sha256, .sha384, .sha512, .streebog256, .streebog512]

    /// The digest named `name` (`sha256`, `SHA-256`, `streebog256`, `GOST R 34.11-2012 256`,
    /// OpenSSL's `md_gost12_256`, or the dotted OID), or nil.
    public init?(name: String) {
        let normalized = name.lowercased().replacingOccurrences(of: "-", with: "")
        let aliases = ["md_gost12_256": "streebog256", "md_gost12_512": "streebog512"]
        let key = aliases[normalized] ?? normalized
        guard
            let match = Self.allSupported.first(where: {
                $0.rawValue == key || $0.oid == name || $0.displayName.lowercased() == name.lowercased()
            })
        else { return nil }
        self = match
    }

    /// The digest that fits a key: Streebog-256 for GOST R 34.10-2012 256-bit keys, Streebog-512
    /// for 512-bit ones, SHA-256 for RSA and EC keys.
    ///
    /// This is the one rule of the package for "which digest does this key sign with by default":
    /// local CMS signing, server-side hash signing (CryptoPro DSS `Hash: True`) and the emulator all
    /// ask here.
    /// - Throws: `.unsupportedAlgorithm` for a GOST key of a size GOST R 34.10-2012 does not define.
    public static func preferred(for keyAlgorithm: PublicKeyAlgorithm) throws -> DigestAlgorithm {
        guard keyAlgorithm.isGOST else { return .sha256 }
        switch keyAlgorithm.gostKeySize {
        case 256: return .streebog256
        case 512: return .streebog512
        default:
            throw CertificateProviderError(
                .unsupportedAlgorithm,
                "no GOST R 34.11-2012 digest fits a \(keyAlgorithm) key"
            )
        }
    }

    /// Whether this is a GOST R 34.11-2012 (Streebog) digest.
    public var isGOST: Bool { GOSTEngine.isGOSTOID(oid) }

    /// Checks that this OpenSSL can compute the digest.
    /// - Throws: `.unsupportedAlgorithm` ("GOST needs libengine-gost-openssl") for Streebog without
    ///   the gost engine.
    public func checkAvailable() throws { _ = try evpMD() }

    /// Checks that `digest` has this algorithm's length, as every key and builder does before it
    /// signs a precomputed digest.
    /// - Throws: `.invalidParameter` naming both lengths.
    package func checkLength(of digest: [UInt8]) throws {
        guard digest.count == outputByteCount else {
            throw CertificateProviderError.invalidParameter(
                "a \(self) digest has \(outputByteCount) bytes, not \(digest.count)"
            )
        }
    }

    /// The OpenSSL digest for this algorithm.
    /// - Throws: `.unsupportedAlgorithm` when OpenSSL has no implementation (Streebog without the
    ///   gost engine), or for a value this build does not know.
    package func evpMD() throws -> OpaquePointer {
        switch rawValue {
        case "sha256", "sha384", "sha512":
            // The three legacy SHA-2 digests are static tables in libcrypto: always there.
            guard let md = MessageDigest.sha2(rawValue) else { break }
            return md
        case "streebog256", "streebog512":
            guard let md = MessageDigest.streebog(bits: rawValue == "streebog256" ? 256 : 512) else {
                throw GOSTEngine.unavailableError("the \(displayName) digest")
            }
            return md
        default: break
        }
        throw CertificateProviderError(.unsupportedAlgorithm, "the digest '\(rawValue)' is not supported")
    }

    /// The SHA-2 implementations fetched from OpenSSL's default provider once per process, by raw
    /// value. A legacy `EVP_sha256()` makes `EVP_DigestInit_ex` look the implementation up again on
    /// every hash (a locked name lookup in the provider store); a fetched one does not. Never freed:
    /// they live as long as the process.
    private struct FetchedDigests: @unchecked Sendable {
        let byRawValue = ["sha256": "SHA256", "sha384": "SHA384", "sha512": "SHA512"].compactMapValues {
            (name: String) in MessageDigest.fetch(name)
        }
    }

    private static let fetched = FetchedDigests()

    /// The implementation ``Hasher`` initialises with: the fetched SHA-2 one, or ``evpMD()``.
    private func hashingMD() -> OpaquePointer? { Self.fetched.byRawValue[rawValue] ?? (try? evpMD()) }

    /// Hashes bytes in one call.
    public func hash(_ data: some ContiguousBytes) -> [UInt8] {
        var hasher = Hasher(self)
        data.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }

    /// An incremental hasher for streaming large inputs.
    public struct Hasher: ~Copyable {
        private let context: MessageDigest.Context
        /// The algorithm being computed.
        public let algorithm: DigestAlgorithm

        /// Starts a hash.
        ///
        /// A digest OpenSSL cannot compute (Streebog without the gost engine) hashes to an empty
        /// result; callers that can meet one check ``DigestAlgorithm/checkAvailable()`` first.
        public init(_ algorithm: DigestAlgorithm) {
            self.algorithm = algorithm
            context = MessageDigest.Context(algorithm.hashingMD())
        }

        /// Adds bytes.
        public mutating func update(_ bytes: UnsafeRawBufferPointer) {
            context.update(bytes)
        }

        /// Adds bytes.
        public mutating func update(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { update($0) }
        }

        /// Finishes and returns the digest.
        public consuming func finalize() -> [UInt8] { context.finalize() }
    }
}
