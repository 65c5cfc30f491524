internal import COpenSSL

/// OpenSSL's memory helpers for secrets: wiping that the compiler cannot drop, and comparing in
/// constant time.
package enum SecureMemory {
    /// Overwrites `buffer` with zeros (`OPENSSL_cleanse`).
    package static func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
        OPENSSL_cleanse(buffer.baseAddress, buffer.count)
    }

    /// Whether two buffers of the same length hold the same bytes, in time that does not depend on
    /// where they differ (`CRYPTO_memcmp`). Buffers of different lengths are never equal.
    package static func constantTimeEquals(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return CRYPTO_memcmp(lhs.baseAddress, rhs.baseAddress, lhs.count) == 0
    }
}
