/// A strict RFC 8259 JSON parser straight from UTF-8 bytes to ``JSONValue`` (no Foundation object
/// graph in between, which cost about twice the parse itself).
///
/// - Any top-level value; whitespace is space, tab, LF and CR only; nothing may follow the value.
///   A leading UTF-8 byte order mark is skipped (RFC 8259 §8.1 allows ignoring it); other encodings
///   are refused.
/// - Strings must be valid UTF-8 with no unescaped control character; `\u` escapes must pair
///   surrogates. Numbers follow the RFC grammar (no leading zeros, `+`, `.5`, `NaN`).
/// - A number without fraction or exponent that fits `Int` is `.integer`, any other `.number`.
/// - An object's duplicate key keeps the last value.
/// - Nesting deeper than ``maximumDepth`` is refused, so hostile input cannot exhaust the stack.
///   Input size is bounded by the caller (transports cap bodies, 16 MiB by default); the parser
///   keeps no more than the value it builds.
struct JSONParser {
    /// The deepest nesting of arrays and objects accepted (as Foundation's parser).
    static let maximumDepth = 512

    /// Parses one JSON text.
    /// - Throws: ``JSONError`` `.malformed` saying what is wrong and at which byte offset.
    static func parse(_ bytes: UnsafeRawBufferPointer) throws -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { parser.offset = 3 }
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.offset == bytes.count else { throw parser.failure("unexpected data after the JSON value") }
        return value
    }

    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    private init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    private func failure(_ what: String) -> JSONError {
        JSONError(.malformed, "the data is not valid JSON: \(what) at byte \(offset)")
    }

    private mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws -> JSONValue {
        guard offset < bytes.count else { throw failure("unexpected end of data") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw failure("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - offset >= count else { throw failure("invalid literal") }
        for index in 0..<count where bytes[offset + index] != literal.utf8Start[index] {
            throw failure("invalid literal")
        }
        offset += count
    }

    private mutating func parseObject(depth: Int) throws -> JSONValue {
        guard depth <= JSONParser.maximumDepth else { throw failure("nesting deeper than \(JSONParser.maximumDepth)") }
        offset += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
            offset += 1
            return .object(members)
        }
        members.reserveCapacity(8)  // one allocation for the usual API object instead of growing 1, 2, 4, 8
        while true {
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else {
                throw failure("expected a string key")
            }
            let key = try parseString()
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            offset += 1
            skipWhitespace()
            members[key] = try parseValue(depth: depth)
            skipWhitespace()
            guard offset < bytes.count else { throw failure("unexpected end of data in an object") }
            switch bytes[offset] {
            case UInt8(ascii: ","):
                offset += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                offset += 1
                return .object(members)
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws -> JSONValue {
        guard depth <= JSONParser.maximumDepth else { throw failure("nesting deeper than \(JSONParser.maximumDepth)") }
        offset += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
            offset += 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard offset < bytes.count else { throw failure("unexpected end of data in an array") }
            switch bytes[offset] {
            case UInt8(ascii: ","):
                offset += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                offset += 1
                return .array(elements)
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    /// A string starting at the opening quote; the offset ends after the closing one.
    private mutating func parseString() throws -> String {
        offset += 1  // "
        let start = offset
        // Fast path: no escape before the closing quote; the bytes become the string directly. An
        // all-ASCII run needs no UTF-8 validation, and String(decoding:) marks it ASCII (later
        // base64 and date parsing of such strings take their fast paths).
        var highBits: UInt8 = 0
        let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let wordBits: UInt64
        (offset, wordBits) = JSONStringBytes.skipPlainWords(base, count: bytes.count, from: offset)
        while offset < bytes.count {
            let byte = base[offset]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(start: base + start, count: offset - start)
                let string: String
                if highBits & 0x80 == 0 && wordBits & JSONStringBytes.highBits == 0 {
                    string = String(decoding: text, as: UTF8.self)
                } else {
                    guard let valid = String(validating: text, as: UTF8.self) else { throw failure("invalid UTF-8") }
                    string = valid
                }
                offset += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("unescaped control character in a string") }
            highBits |= byte
            offset += 1
        }
        var buffer = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<offset]))
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: buffer, as: UTF8.self) else { throw failure("invalid UTF-8") }
                offset += 1
                return string
            case UInt8(ascii: "\\"):
                offset += 1
                try parseEscape(into: &buffer)
            case 0..<0x20:
                throw failure("unescaped control character in a string")
            default:
                buffer.append(byte)
                offset += 1
            }
        }
        throw failure("unterminated string")
    }

    /// One escape after its backslash, appended as UTF-8.
    private mutating func parseEscape(into buffer: inout [UInt8]) throws {
        guard offset < bytes.count else { throw failure("unterminated string") }
        let byte = bytes[offset]
        offset += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(byte)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try parseHex4())
            if 0xD800..<0xDC00 ~= scalar {
                guard bytes.count - offset >= 2, bytes[offset] == UInt8(ascii: "\\"),
                    bytes[offset + 1] == UInt8(ascii: "u")
                else { throw failure("unpaired UTF-16 surrogate in a \\u escape") }
                offset += 2
                let low = UInt32(try parseHex4())
                guard 0xDC00..<0xE000 ~= low else { throw failure("unpaired UTF-16 surrogate in a \\u escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if 0xDC00..<0xE000 ~= scalar {
                throw failure("unpaired UTF-16 surrogate in a \\u escape")
            }
            // Every value left is a valid scalar (surrogates were paired or refused above).
            buffer.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default:
            offset -= 1
            throw failure("invalid escape")
        }
    }

    private mutating func parseHex4() throws -> UInt16 {
        guard bytes.count - offset >= 4 else { throw failure("truncated \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | UInt16(digit)
            offset += 1
        }
        return value
    }

    /// A number by the RFC grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func parseNumber() throws -> JSONValue {
        let start = offset
        let negative = bytes[offset] == UInt8(ascii: "-")
        if negative { offset += 1 }
        guard offset < bytes.count, isDigit(bytes[offset]) else { throw failure("a number needs digits") }
        // The integer part, accumulated negatively so that Int.min fits.
        var magnitude = 0
        var fitsInt = true
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
            if offset < bytes.count, isDigit(bytes[offset]) { throw failure("a number may not have leading zeros") }
        } else {
            while offset < bytes.count, isDigit(bytes[offset]) {
                if fitsInt {
                    let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
                    let (next, overflow2) = times10.subtractingReportingOverflow(Int(bytes[offset] - UInt8(ascii: "0")))
                    if overflow1 || overflow2 { fitsInt = false } else { magnitude = next }
                }
                offset += 1
            }
        }
        var isInteger = true
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            guard offset < bytes.count, isDigit(bytes[offset]) else { throw failure("a fraction needs digits") }
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            guard offset < bytes.count, isDigit(bytes[offset]) else { throw failure("an exponent needs digits") }
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        if isInteger && fitsInt {
            if negative { return .integer(magnitude) }
            if magnitude != Int.min { return .integer(-magnitude) }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        guard let number = Double(text), number.isFinite else { throw failure("number out of range") }
        return .number(number)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
}
