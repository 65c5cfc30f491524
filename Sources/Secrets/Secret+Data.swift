import Foundation
internal import OpenSSLWrappers

extension Secret {
    /// Creates a secret from the bytes of `data` (as read from a file or a pipe), then wipes the
    /// data's buffer with `OPENSSL_cleanse` and empties it, so no copy of the secret stays behind in it.
    package convenience init(wiping data: inout Data) {
        self.init(bytes: data)
        data.withUnsafeMutableBytes { SecureMemory.cleanse($0) }
        data.removeAll()
    }
}
