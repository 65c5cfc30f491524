internal import COpenSSL
internal import COpenSSLShims

/// OpenSSL's per-thread error queue. Swift may change threads at any `await`, so callers clear the
/// queue, make the C call and drain it inside one synchronous function.
package enum OpenSSLErrorQueue {
    /// One entry of the queue.
    package struct Entry: Sendable {
        package let library: Int32
        package let reason: Int32
        package let text: String
    }

    /// Empties the queue.
    package static func clear() { ERR_clear_error() }

    /// Removes and returns every entry, oldest first.
    package static func drainEntries() -> [Entry] {
        var entries: [Entry] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let text = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            entries.append(
                Entry(library: COpenSSLShims_ERR_GET_LIB(code), reason: COpenSSLShims_ERR_GET_REASON(code), text: text)
            )
            if entries.count > 64 {
                ERR_clear_error()
                break
            }
        }
        return entries
    }

    /// Removes and returns the queue as strings.
    package static func drain() -> [String] { drainEntries().map(\.text) }
}

/// Loads OpenSSL's `legacy` provider (RC2, RC4, DES, MD4, … used by old PKCS#12 files) together with
/// `default`, once per process. Loading only `legacy` would leave no modern algorithms.
package enum OpenSSLProviders {
    // The providers stay loaded for the life of the process, so the handles are kept here rather
    // than dropped: OPENSSL_cleanup at exit leaves a provider we hold a reference to in place, and
    // only a live pointer to it keeps LeakSanitizer from reporting it (and its child library
    // context) as leaked. Written once by the lazy initializer, never mutated, only compared.
    nonisolated(unsafe) private static let handles: (default: OpaquePointer?, legacy: OpaquePointer?) = {
        let defaultProvider = OSSL_PROVIDER_load(nil, "default")
        let legacyProvider = OSSL_PROVIDER_load(nil, "legacy")
        ERR_clear_error()
        return (defaultProvider, legacyProvider)
    }()

    /// Makes sure `default` and `legacy` are loaded; returns whether `legacy` is available.
    @discardableResult
    package static func loadLegacy() -> Bool { handles.default != nil && handles.legacy != nil }
}
