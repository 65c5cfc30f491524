/// Bytes as hexadecimal text, built from a digit table: `String(format: "%02x")` per byte costs a
/// formatter call each, which showed in profiles of commands that print thousands of digests.
package enum HexText {
    /// `bytes` as lower-case hex digits, two per byte, with nothing between them.
    package static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        encode(bytes, digits: lowercaseDigits, separator: nil)
    }

    /// `bytes` as upper-case hex pairs, `separator` (when given) between the pairs.
    package static func uppercase(_ bytes: some Sequence<UInt8>, separator: UInt8? = nil) -> String {
        encode(bytes, digits: uppercaseDigits, separator: separator)
    }

    private static let lowercaseDigits = Array("0123456789abcdef".utf8)
    private static let uppercaseDigits = Array("0123456789ABCDEF".utf8)

    private static func encode(_ bytes: some Sequence<UInt8>, digits: [UInt8], separator: UInt8?) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 3)
        for byte in bytes {
            if let separator, !text.isEmpty { text.append(separator) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
