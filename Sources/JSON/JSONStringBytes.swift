/// The scan the parser and the writer share over a JSON string's bytes: which bytes end a plain run
/// (a quote, a backslash or a control character: the parser stops there, the writer escapes them),
/// and a word-at-a-time skip over the runs between them (base64 documents and text runs are long).
enum JSONStringBytes {
    /// The high bit of each byte of a word (a word OR-ed over bytes has one set when one was non-ASCII).
    static let highBits: UInt64 = 0x8080_8080_8080_8080
    private static let ones: UInt64 = 0x0101_0101_0101_0101

    /// Whether `byte` ends a plain run: `"`, `\` or a control character.
    @inline(__always)
    static func isSpecial(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C }

    /// Skips whole eight-byte words from `offset` while none holds a special byte (the classic "has
    /// a zero byte" and "has a byte less than n" word tests, exact for whether a word has one).
    /// - Returns: the offset of the first word that holds one, or of the last fewer than eight bytes
    ///   (the caller goes on byte by byte from there), and the OR of the skipped words.
    @inline(__always)
    static func skipPlainWords(
        _ base: UnsafePointer<UInt8>,
        count: Int,
        from offset: Int
    ) -> (offset: Int, bits: UInt64) {
        var offset = offset
        var bits: UInt64 = 0
        while count - offset >= 8 {
            let word = UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let special =
                ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
            if special & highBits != 0 { break }
            bits |= word
            offset += 8
        }
        return (offset, bits)
    }
}
