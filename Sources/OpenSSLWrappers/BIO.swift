internal import COpenSSL
internal import COpenSSLShims

/// Short-lived memory BIOs, created and freed inside one call.
package enum MemoryBIO {
    /// Calls `body` with a read-only BIO over `bytes`; the BIO is freed when `body` returns.
    /// - Throws: `OpenSSLError` when `bytes` are too large for a BIO or none could be allocated, or what `body` throws.
    package static func withReadBIO<R>(
        _ bytes: some ContiguousBytesLike,
        _ body: (OpaquePointer) throws -> R
    ) throws -> R {
        try bytes.withBytes { buffer in
            guard buffer.count <= Int(Int32.max) else {
                throw OpenSSLError(.malformedInput, "input is too large (\(buffer.count) bytes)", openSSLErrors: [])
            }
            // A zero-length BIO_new_mem_buf still needs a valid pointer; use a one-byte stand-in.
            let dummy: [UInt8] = [0]
            return try dummy.withUnsafeBytes { fallback in
                let base = buffer.count > 0 ? buffer.baseAddress : fallback.baseAddress
                guard let bio = BIO_new_mem_buf(base, Int32(buffer.count)) else {
                    throw OpenSSLError(.cryptoFailure, "could not allocate a memory BIO")
                }
                defer { BIO_free(bio) }
                return try body(bio)
            }
        }
    }

    /// Calls `body` with a writable memory BIO and returns what was written to it.
    /// - Throws: `OpenSSLError` when no BIO could be allocated, or what `body` throws.
    package static func collecting(_ body: (OpaquePointer) throws -> Void) throws -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else {
            throw OpenSSLError(.cryptoFailure, "could not allocate a memory BIO")
        }
        defer { BIO_free(bio) }
        try body(bio)
        return contents(of: bio)
    }

    /// The bytes held by a memory BIO.
    package static func contents(of bio: OpaquePointer) -> [UInt8] {
        var pointer: UnsafeMutablePointer<CChar>?
        let length = COpenSSLShims_BIO_get_mem_data(bio, &pointer)
        guard length > 0, let pointer else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: length))
    }
}

/// Byte containers the BIO helpers accept without copying.
package protocol ContiguousBytesLike {
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension Array: ContiguousBytesLike where Element == UInt8 {
    package func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try withUnsafeBytes(body) }
}

extension ArraySlice: ContiguousBytesLike where Element == UInt8 {
    package func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try withUnsafeBytes(body) }
}
