internal import COpenSSL

/// The key of a signature's `/VRI` entry in a PDF's Document Security Store (ISO 32000-2
/// §12.8.4.3): the upper-case hex SHA-1 of the signature's `/Contents` value, padding included, as
/// pyHanko and Adobe key it. SHA-1 here names an entry; it protects nothing, which is why it is not
/// one of the ``DigestAlgorithm``s signatures may use.
package enum VRIKey {
    /// The upper-case hex SHA-1 of `contents` (40 characters).
    package static func hex(ofSignatureContents contents: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        contents.withUnsafeBufferPointer { buffer in
            digest.withUnsafeMutableBufferPointer { out in
                _ = SHA1(buffer.baseAddress, buffer.count, out.baseAddress)
            }
        }
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: digest.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }
}
