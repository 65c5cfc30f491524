/// Writes compact JSON exactly as `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` does
/// (keys in code-unit order; `"` and `\` escaped, `\b \f \n \r \t` and `\u00XX` for the other
/// control characters; everything else, `/` and non-ASCII included, as is), for the values where
/// that is simple to match: object keys all ASCII and no `.number` (whose formatting is
/// JSONEncoder's own). Returns nil for the others, which go to JSONEncoder.
enum CompactJSONWriter {
    static func write(_ value: JSONValue) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        return append(value, to: &output) ? output : nil
    }

    private static func append(_ value: JSONValue, to output: inout [UInt8]) -> Bool {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .integer(let number): output.append(contentsOf: String(number).utf8)
        case .number: return false
        case .string(let text): appendString(text, to: &output)
        case .array(let items):
            output.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                guard append(item, to: &output) else { return false }
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            guard members.keys.allSatisfy({ key in key.utf8.allSatisfy { $0 < 0x80 } }) else { return false }
            output.append(UInt8(ascii: "{"))
            // ASCII keys: String order is code-unit order.
            for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                appendString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                guard append(member.value, to: &output) else { return false }
            }
            output.append(UInt8(ascii: "}"))
        }
        return true
    }

    private static func appendString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var runStart = 0
            var index = 0
            while true {
                // Long runs (base64 documents) pass eight bytes at a time; the bytes go out a run at a time.
                index = JSONStringBytes.skipPlainWords(base, count: bytes.count, from: index).offset
                while index < bytes.count, !JSONStringBytes.isSpecial(base[index]) { index += 1 }
                guard index < bytes.count else { break }
                let byte = base[index]
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                index += 1
                runStart = index
                switch byte {
                case 0x22: output.append(contentsOf: [0x5C, 0x22])
                case 0x5C: output.append(contentsOf: [0x5C, 0x5C])
                case 0x08: output.append(contentsOf: [0x5C, UInt8(ascii: "b")])
                case 0x0C: output.append(contentsOf: [0x5C, UInt8(ascii: "f")])
                case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    output.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        output.append(UInt8(ascii: "\""))
    }
}
