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
    /// - Throws: ``JSONError`` `.malformed` when the bytes are not JSON (saying what is wrong and where).
    public init(parsing bytes: some Collection<UInt8>) throws {
        if let value = try bytes.withContiguousStorageIfAvailable({ try JSONParser.parse(UnsafeRawBufferPointer($0)) })
        {
            self = value
        } else {
            self = try Array(bytes).withUnsafeBytes { try JSONParser.parse($0) }
        }
    }

    /// Parses JSON text (any top-level value).
    /// - Throws: ``JSONError`` `.malformed` when the text is not JSON.
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
    /// - Throws: ``JSONError`` `.unencodable` for a non-finite number (JSON cannot hold NaN or infinity).
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
            throw JSONError(.unencodable, "the value cannot be written as JSON (a number is NaN or infinite)")
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
