internal import COpenSSL
public import Foundation

/// A message digest algorithm: an open set of the digests this package signs with.
public struct DigestAlgorithm: Hashable, Sendable, CustomStringConvertible {
    /// The lower-case name (`sha256`), as on command lines and in OpenSSL.
    public let rawValue: String
    /// The digest length in bytes.
    public let outputByteCount: Int
    /// The dotted OID.
    public let oid: String

    private init(_ rawValue: String, outputByteCount: Int, oid: String) {
        self.rawValue = rawValue
        self.outputByteCount = outputByteCount
        self.oid = oid
    }

    public var description: String { rawValue }

    public static let sha256 = DigestAlgorithm("sha256", outputByteCount: 32, oid: "2.16.840.1.101.3.4.2.1")
    public static let sha384 = DigestAlgorithm("sha384", outputByteCount: 48, oid: "2.16.840.1.101.3.4.2.2")
    public static let sha512 = DigestAlgorithm("sha512", outputByteCount: 64, oid: "2.16.840.1.101.3.4.2.3")

    /// Every supported digest.
    public static let allSupported: [DigestAlgorithm] = [.sha256, .sha384, .sha512]

    /// The digest named `name` (`sha256`, `SHA-256`, …), or nil.
    public init?(name: String) {
        let normalized = name.lowercased().replacingOccurrences(of: "-", with: "")
        guard let match = Self.allSupported.first(where: { $0.rawValue == normalized }) else { return nil }
        self = match
    }

    /// The OpenSSL digest for this algorithm.
    package var evpMD: OpaquePointer {
        switch rawValue {
        case "sha384": return EVP_sha384()
        case "sha512": return EVP_sha512()
        default: return EVP_sha256()
        }
    }

    /// Hashes bytes in one call.
    public func hash(_ data: some ContiguousBytes) -> [UInt8] {
        var hasher = Hasher(self)
        data.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }

    /// An incremental hasher for streaming large inputs.
    public struct Hasher: ~Copyable {
        private let context: OpaquePointer
        /// The algorithm being computed.
        public let algorithm: DigestAlgorithm

        /// Starts a hash.
        public init(_ algorithm: DigestAlgorithm) {
            self.algorithm = algorithm
            // EVP_MD_CTX_new only fails on allocation failure, which Swift treats as fatal anyway.
            context = EVP_MD_CTX_new()!
            EVP_DigestInit_ex(context, algorithm.evpMD, nil)
        }

        /// Adds bytes.
        public mutating func update(_ bytes: UnsafeRawBufferPointer) {
            guard bytes.count > 0 else { return }
            EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
        }

        /// Adds bytes.
        public mutating func update(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { update($0) }
        }

        /// Finishes and returns the digest.
        public consuming func finalize() -> [UInt8] {
            var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var length: UInt32 = 0
            EVP_DigestFinal_ex(context, &output, &length)
            return Array(output.prefix(Int(length)))
        }

        deinit { EVP_MD_CTX_free(context) }
    }
}
