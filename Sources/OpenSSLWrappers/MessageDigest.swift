internal import COpenSSL

/// OpenSSL's message digests (`EVP_MD`): looking one up and hashing with it.
package enum MessageDigest {
    /// The legacy static SHA-2 digest named `sha256`, `sha384` or `sha512`, or nil for another name.
    package static func sha2(_ name: String) -> OpaquePointer? {
        switch name {
        case "sha256": return EVP_sha256()
        case "sha384": return EVP_sha384()
        case "sha512": return EVP_sha512()
        default: return nil
        }
    }

    /// The Streebog digest of `bits` (256 or 512) from the gost engine, or nil when the engine is
    /// not loaded.
    package static func streebog(bits: Int) -> OpaquePointer? {
        guard GOSTEngineLoader.load() else { return nil }
        return EVP_get_digestbyname(bits == 512 ? SN_id_GostR3411_2012_512 : SN_id_GostR3411_2012_256)
    }

    /// The implementation fetched from the default provider (`SHA256`, …), or nil. A fetched digest
    /// skips the locked name lookup a legacy `EVP_sha256()` makes on every `EVP_DigestInit_ex`.
    /// It is never freed: callers keep it for the life of the process.
    package static func fetch(_ name: String) -> OpaquePointer? { EVP_MD_fetch(nil, name, nil) }

    /// Owns one `EVP_MD_CTX` and frees it in `deinit`: an incremental hash.
    package final class Context {
        private let context: OpaquePointer

        /// Starts a hash with `md`; with no `md` (an unavailable algorithm) the result is empty.
        package init(_ md: OpaquePointer?) {
            // EVP_MD_CTX_new only fails on allocation failure, which Swift treats as fatal anyway.
            context = EVP_MD_CTX_new()!
            if let md { EVP_DigestInit_ex(context, md, nil) }
        }

        deinit { EVP_MD_CTX_free(context) }

        /// Adds bytes.
        package func update(_ bytes: UnsafeRawBufferPointer) {
            guard bytes.count > 0 else { return }
            EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
        }

        /// Finishes and returns the digest; empty when the hash could not be computed.
        package func finalize() -> [UInt8] {
            [UInt8](unsafeUninitializedCapacity: Int(EVP_MAX_MD_SIZE)) { buffer, count in
                var length: UInt32 = 0
                guard EVP_DigestFinal_ex(context, buffer.baseAddress, &length) == 1 else {
                    ERR_clear_error()
                    count = 0
                    return
                }
                count = Int(length)
            }
        }
    }
}
