/// JSON string escaping for bytes that must not pass through a `String` (secrets).
package enum JSONEscaping {
    /// Appends `bytes` (UTF-8) escaped for the inside of a JSON string: `"` `\` and control
    /// characters are escaped, everything else is copied.
    package static func appendEscaped(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                output.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            default: output.append(byte)
            }
        }
    }
}
