import Foundation

/// The top-level entries of a PDF dictionary as text: each key and the bytes of its value, as the
/// syntax delimits them (nested dictionaries, arrays, literal and hex strings, references `n g R`;
/// comments skipped). Used for the trailers and cross-reference stream dictionaries of
/// ``PDFXRefSection``, whose references name objects of the file, not of any document at hand.
///
/// Strict on purpose: a key written with `#` escapes or given twice, or anything it cannot
/// delimit, gives nil (qpdf reads such a dictionary differently or warns about it).
struct PDFDictionaryText {
    /// Each key (`/Size`) and its value's bytes.
    private(set) var entries: [String: ArraySlice<UInt8>] = [:]

    /// Reads the dictionary that starts (after whitespace) at the beginning of `bytes`; what
    /// follows it is not read.
    init?(_ bytes: ArraySlice<UInt8>) {
        var scanner = Scanner(bytes: bytes, index: bytes.startIndex)
        guard scanner.skipSpace(), scanner.take("<<") else { return nil }
        while true {
            guard scanner.skipSpace() else { return nil }
            if scanner.take(">>") { return }
            guard let key = scanner.name(), !key.contains("#"), scanner.skipSpace(), let value = scanner.value(),
                entries.updateValue(bytes[value], forKey: key) == nil
            else { return nil }
        }
    }

    /// The value of `key` as a direct integer; nil when absent or anything else.
    func integer(_ key: String) -> Int64? {
        entries[key].flatMap { Self.integer($0) }
    }

    /// A value that is only decimal digits (and an optional sign), as a number.
    static func integer(_ value: ArraySlice<UInt8>) -> Int64? {
        Int64(String(decoding: value, as: UTF8.self))
    }

    /// The value of `key` as a reference, `n g`; nil when absent or anything else.
    func reference(_ key: String) -> (number: Int, generation: Int)? {
        guard let value = entries[key] else { return nil }
        let parts = value.split(whereSeparator: PDFBytes.isWhitespace)
        guard parts.count == 3, parts[2].elementsEqual("R".utf8), let number = Self.integer(parts[0]),
            let generation = Self.integer(parts[1]), number > 0, generation >= 0
        else { return nil }
        return (Int(number), Int(generation))
    }

    /// The integers of an array value of `key` (`[1 4 2]`); nil when absent or not only integers.
    func integers(_ key: String) -> [Int64]? {
        guard let value = entries[key], value.first == 0x5B, value.last == 0x5D else { return nil }
        let items = value.dropFirst().dropLast().split(whereSeparator: PDFBytes.isWhitespace)
        let numbers = items.compactMap { Self.integer($0) }
        return numbers.count == items.count ? numbers : nil
    }

    /// A cursor over the text.
    private struct Scanner {
        let bytes: ArraySlice<UInt8>
        var index: Int

        static func isDelimiter(_ byte: UInt8) -> Bool { Array("()<>[]{}/%".utf8).contains(byte) }

        /// Skips whitespace and comments; false at the end of the text.
        mutating func skipSpace() -> Bool {
            while index < bytes.endIndex {
                if PDFBytes.isWhitespace(bytes[index]) {
                    index += 1
                } else if bytes[index] == 0x25 {
                    while index < bytes.endIndex, bytes[index] != 0x0A, bytes[index] != 0x0D { index += 1 }
                } else {
                    return true
                }
            }
            return false
        }

        mutating func take(_ token: String) -> Bool {
            let utf8 = Array(token.utf8)
            guard bytes[index...].starts(with: utf8) else { return false }
            index += utf8.count
            return true
        }

        /// A name at the cursor (`/Key`), as text with its slash.
        mutating func name() -> String? {
            guard index < bytes.endIndex, bytes[index] == 0x2F else { return nil }
            let start = index
            index += 1
            regular()
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// Skips regular characters (a name's, a number's, a keyword's).
        mutating func regular() {
            while index < bytes.endIndex, !PDFBytes.isWhitespace(bytes[index]), !Self.isDelimiter(bytes[index]) {
                index += 1
            }
        }

        /// One value at the cursor (a reference `n g R` counts as one); its range.
        mutating func value(depth: Int = 0) -> Range<Int>? {
            guard depth < 32, index < bytes.endIndex else { return nil }
            let start = index
            switch bytes[index] {
            case 0x2F:
                _ = name()
            case 0x28:
                guard literalString() else { return nil }
            case 0x3C where bytes[index...].starts(with: [0x3C, 0x3C]):
                index += 2
                while true {
                    guard skipSpace() else { return nil }
                    if take(">>") { break }
                    guard name() != nil, skipSpace(), value(depth: depth + 1) != nil else { return nil }
                }
            case 0x3C:
                guard let end = bytes[index...].firstIndex(of: 0x3E) else { return nil }
                index = end + 1
            case 0x5B:
                index += 1
                while true {
                    guard skipSpace() else { return nil }
                    if take("]") { break }
                    guard value(depth: depth + 1) != nil else { return nil }
                }
            default:
                regular()
                guard index > start else { return nil }
                referenceTail(after: start)
            }
            return start..<index
        }

        /// After a number, takes ` g R` when a reference follows.
        mutating func referenceTail(after start: Int) {
            guard PDFDictionaryText.integer(bytes[start..<index]) != nil else { return }
            var probe = self
            guard probe.skipSpace(), let generation = probe.numberToken(), probe.skipSpace(), probe.take("R"),
                probe.index == probe.bytes.endIndex || PDFBytes.isWhitespace(probe.bytes[probe.index])
                    || Self.isDelimiter(probe.bytes[probe.index]), generation >= 0
            else { return }
            index = probe.index
        }

        mutating func numberToken() -> Int64? {
            let start = index
            regular()
            return PDFDictionaryText.integer(bytes[start..<index])
        }

        /// A literal string `( … )` with nested parentheses and backslash escapes.
        mutating func literalString() -> Bool {
            var depth = 0
            while index < bytes.endIndex {
                switch bytes[index] {
                case 0x5C: index += 1
                case 0x28: depth += 1
                case 0x29:
                    depth -= 1
                    if depth == 0 {
                        index += 1
                        return true
                    }
                default: break
                }
                index += 1
            }
            return false
        }
    }
}
