internal import COpenSSL
import CertificateProviders
internal import OpenSSLWrappers

/// A CMS ContentInfo followed by zero padding, as a PDF's `/Contents` holds it.
package enum PaddedCMS {
    /// The ContentInfo's own bytes (DER or BER), without the zero padding after it.
    /// - Throws: `.malformedInput` when the bytes do not start with a ContentInfo, or something
    ///   other than zeros follows it.
    package static func trimmed(_ bytes: [UInt8]) throws -> [UInt8] {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        let end = bytes.withUnsafeBufferPointer { buffer -> Int? in
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let parsed = d2i_CMS_ContentInfo(nil, &cursor, buffer.count), let cursor else { return nil }
            CMS_ContentInfo_free(parsed)
            return cursor - base
        }
        guard let end, bytes[end...].allSatisfy({ $0 == 0 }) else {
            throw CertificateProviderError(
                .malformedInput,
                "a signature's /Contents is not a CMS structure followed by zero padding"
            )
        }
        return Array(bytes[..<end])
    }
}
