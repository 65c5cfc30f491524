import CertificateProviders

/// A document's digest, its size and, when the signature embeds it, its content.
struct DigestedDocument {
    var digest: [UInt8]
    var size: Int64
    var content: [UInt8]?
}

extension DigestedDocument {
    /// The digest of bytes in memory (kept as the content).
    init(bytes: [UInt8], algorithm: DigestAlgorithm) {
        self.init(digest: algorithm.hash(bytes), size: Int64(bytes.count), content: bytes)
    }
}
