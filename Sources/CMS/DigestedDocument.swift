import CertificateProviders

/// A document's digest, its size and, when the signature embeds it, its content.
package struct DigestedDocument {
    package var digest: [UInt8]
    package var size: Int64
    package var content: [UInt8]?

    /// A digest and size made elsewhere, with the content when the signature embeds it.
    package init(digest: [UInt8], size: Int64, content: [UInt8]?) {
        self.digest = digest
        self.size = size
        self.content = content
    }
}

extension DigestedDocument {
    /// The digest of bytes in memory (kept as the content).
    package init(bytes: [UInt8], algorithm: DigestAlgorithm) {
        self.init(digest: algorithm.hash(bytes), size: Int64(bytes.count), content: bytes)
    }
}
