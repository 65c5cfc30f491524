public import CertificateProviders
import Foundation

/// A JSON document as a `Sendable` value: what servers answer, kept as is (for example an FMP
/// envelope's `result.raw`).
///
/// Integers and other numbers are distinct cases so ids survive a round trip exactly; `true` and
/// `false` are never confused with `1` and `0`. Objects print with sorted keys.
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible, ExpressibleByDictionaryLiteral,
    ExpressibleByArrayLiteral, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral
{
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without fraction or exponent that fits `Int`.
    case integer(Int)
    /// Any other number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object (member order is not kept).
    case object([String: JSONValue])

    /// Parses JSON bytes (any top-level value), strictly by RFC 8259: UTF-8 only, nesting at most
    /// 512 deep, a number without fraction or exponent that fits `Int` is `.integer`.
    /// - Throws: `.malformedInput` when the bytes are not JSON (saying what is wrong and where).
    public init(parsing bytes: some Collection<UInt8>) throws {
        if let value = try bytes.withContiguousStorageIfAvailable({ try JSONParser.parse(UnsafeRawBufferPointer($0)) })
        {
            self = value
        } else {
            self = try Array(bytes).withUnsafeBytes { try JSONParser.parse($0) }
        }
    }

    /// Parses JSON text (any top-level value).
    /// - Throws: `.malformedInput` when the text is not JSON.
    public init(parsing text: String) throws {
        try self.init(parsing: Array(text.utf8))
    }

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Most common first: every failed attempt costs a thrown DecodingError. Foundation's decoder
        // never reads `true` as an Int or `1` as a Bool, so the order does not change the result.
        if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if container.decodeNil() {
            self = .null
        } else {
            self = .number(try container.decode(Double.self))
        }
    }

    /// Encodes the value as JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// An object literal.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// An array literal.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal.
    public init(integerLiteral value: Int) { self = .integer(value) }
    /// A boolean literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    /// Compact UTF-8 JSON with sorted keys and unescaped slashes.
    /// - Throws: `.invalidParameter` for a non-finite number (JSON cannot hold NaN or infinity).
    public func jsonBytes(prettyPrinted: Bool = false) throws -> [UInt8] {
        // Request bodies (ASCII keys, no fractional numbers) are written directly, byte for byte as
        // JSONEncoder writes them: its Codable machinery cost more than the rest of a request.
        if !prettyPrinted, let bytes = CompactJSONWriter.write(self) { return bytes }
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            prettyPrinted
            ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted] : [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(self))
        } catch {
            throw CertificateProviderError.invalidParameter(
                "the value cannot be written as JSON (a number is NaN or infinite)"
            )
        }
    }

    /// The compact JSON text (`null` if it cannot be encoded).
    public var description: String {
        (try? jsonBytes()).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    /// The member `key` of an object, or nil (also for non-objects).
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, or nil.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
    /// The integer (a number with no fractional part is accepted), or nil.
    public var intValue: Int? {
        switch self {
        case .integer(let value): return value
        case .number(let value) where value.rounded() == value && abs(value) < 9.0e15: return Int(value)
        default: return nil
        }
    }
    /// The boolean, or nil.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }
    /// The elements of an array, or nil.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }
    /// The members of an object, or nil.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }
    /// Whether this is `null`.
    public var isNull: Bool { self == .null }

    /// The JSON type name (`object`, `array`, `string`, `integer`, `number`, `boolean`, `null`), for errors.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer: return "integer"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

/// Reads the fields of a JSON object with errors that name the field, its expected type and the
/// context (`"FMP certificates: field 'certificates[0].id' must be an integer, found string"`).
///
/// Clients use the default code `.network` (the server did not speak the protocol); servers use
/// `.malformedInput` for requests.
public struct JSONObjectReader: Sendable {
    /// The object's members.
    public let members: [String: JSONValue]
    /// Where the object sits, for error messages (`"FMP sign"`, `"certificates[2]"`).
    public let context: String
    /// The prefix of field names, for nested objects (`"certificates[2]."`).
    public let path: String
    /// The error code thrown for a wrong shape.
    public let errorCode: CertificateProviderError.Code

    /// Wraps `value`, which must be an object.
    /// - Throws: `errorCode` when `value` is not an object.
    public init(
        _ value: JSONValue,
        context: String,
        path: String = "",
        errorCode: CertificateProviderError.Code = .network
    ) throws {
        guard case .object(let members) = value else {
            let what = path.isEmpty ? "the JSON body" : "field '\(path.dropLast())'"
            throw CertificateProviderError(errorCode, "\(context): \(what) must be an object, found \(value.typeName)")
        }
        self.members = members
        self.context = context
        self.path = path
        self.errorCode = errorCode
    }

    /// The raw member, or nil when absent.
    public func value(_ key: String) -> JSONValue? { members[key] }

    /// A required string field.
    public func string(_ key: String) throws -> String {
        let value = try required(key)
        guard let string = value.stringValue else { throw wrongType(key, "a string", value) }
        return string
    }

    /// An optional string field (absent or null gives nil).
    public func optionalString(_ key: String) throws -> String? {
        guard let value = members[key], !value.isNull else { return nil }
        guard let string = value.stringValue else { throw wrongType(key, "a string", value) }
        return string
    }

    /// A required integer field.
    public func int(_ key: String) throws -> Int {
        let value = try required(key)
        guard let int = value.intValue else { throw wrongType(key, "an integer", value) }
        return int
    }

    /// An optional integer field (absent or null gives nil).
    public func optionalInt(_ key: String) throws -> Int? {
        guard let value = members[key], !value.isNull else { return nil }
        guard let int = value.intValue else { throw wrongType(key, "an integer", value) }
        return int
    }

    /// A required boolean field.
    public func bool(_ key: String) throws -> Bool {
        let value = try required(key)
        guard let bool = value.boolValue else { throw wrongType(key, "a boolean", value) }
        return bool
    }

    /// A required array field.
    public func array(_ key: String) throws -> [JSONValue] {
        let value = try required(key)
        guard let array = value.arrayValue else { throw wrongType(key, "an array", value) }
        return array
    }

    /// A required object field, as a reader.
    public func object(_ key: String) throws -> JSONObjectReader {
        try JSONObjectReader(try required(key), context: context, path: "\(path)\(key).", errorCode: errorCode)
    }

    /// The objects of a required array field, as readers (`key[0].`, `key[1].`, …).
    public func objects(_ key: String) throws -> [JSONObjectReader] {
        try array(key).enumerated().map { index, element in
            try JSONObjectReader(element, context: context, path: "\(path)\(key)[\(index)].", errorCode: errorCode)
        }
    }

    /// A required string field holding base64, decoded.
    public func base64(_ key: String) throws -> [UInt8] {
        let text = try string(key)
        // Strict first (Foundation's fast decoder); text with line breaks or other characters
        // outside the alphabet goes to the lenient one, which skips them (about 4× slower).
        guard let data = Data(base64Encoded: text) ?? Data(base64Encoded: text, options: .ignoreUnknownCharacters)
        else {
            throw CertificateProviderError(errorCode, "\(context): field '\(path)\(key)' must be base64")
        }
        return Array(data)
    }

    private func required(_ key: String) throws -> JSONValue {
        guard let value = members[key], !value.isNull else {
            throw CertificateProviderError(errorCode, "\(context): field '\(path)\(key)' is missing")
        }
        return value
    }

    private func wrongType(_ key: String, _ expected: String, _ found: JSONValue) -> CertificateProviderError {
        CertificateProviderError(
            errorCode,
            "\(context): field '\(path)\(key)' must be \(expected), found \(found.typeName)"
        )
    }
}

/// JSON string escaping for bytes that must not pass through a `String` (secrets).
enum JSONEscaping {
    /// Appends `bytes` (UTF-8) escaped for the inside of a JSON string: `"` `\` and control
    /// characters are escaped, everything else is copied.
    static func appendEscaped(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
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
            var runStart = 0
            for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
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
