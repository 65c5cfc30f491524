import Foundation
import JSON
import TestSupport
import Testing

/// What Foundation's JSONSerialization makes of `bytes`, as a JSONValue by the kinds' rules
/// (integers that fit `Int` are `.integer`), or nil when it refuses them: the reference the
/// package's own parser is checked against.
private func foundationReading(_ bytes: [UInt8]) -> JSONValue? {
    guard let object = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else {
        return nil
    }
    func convert(_ object: Any) -> JSONValue? {
        switch object {
        case let string as String: return .string(string)
        case let dictionary as [String: Any]:
            var members: [String: JSONValue] = [:]
            for (key, value) in dictionary {
                guard let converted = convert(value) else { return nil }
                members[key] = converted
            }
            return .object(members)
        case let array as [Any]:
            var elements: [JSONValue] = []
            for element in array {
                guard let converted = convert(element) else { return nil }
                elements.append(converted)
            }
            return .array(elements)
        case is NSNull: return .null
        case let number as NSNumber:
            switch String(cString: number.objCType) {
            case "c", "B": return .bool(number.boolValue)
            case "i", "s", "l", "q": return .integer(number.intValue)
            default:
                if let exact = Int(exactly: number.doubleValue), number.stringValue == String(exact) {
                    return .integer(exact)
                }
                return .number(number.doubleValue)
            }
        default: return nil
        }
    }
    return convert(object)
}

/// Whether our value agrees with Foundation's: the same shape, strings and booleans, and numbers
/// within a few units in the last place. Foundation's number reading is not correctly rounded (it
/// reads `-922337203.854775808` one ulp off) and reads some 19-digit negative integers that fit
/// `Int` as doubles; ours keeps those as `.integer` (the documented kind rule) and rounds correctly
/// (see `numbers`).
private func agrees(_ ours: JSONValue?, _ reference: JSONValue?) -> Bool {
    func close(_ a: Double, _ b: Double) -> Bool { a == b || abs(a - b) <= 4 * max(a.ulp, b.ulp) }
    switch (ours, reference) {
    case (nil, nil): return true
    case (.integer(let a), .integer(let b)): return a == b
    case (.integer(let a), .number(let b)): return close(Double(a), b)
    case (.number(let a), .number(let b)): return close(a, b)
    case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { agrees($0, $1) }
    case (.object(let a), .object(let b)):
        return a.count == b.count && a.allSatisfy { key, value in b[key].map { agrees(value, $0) } ?? false }
    default: return ours == reference
    }
}

/// Whether every number in the value is finite.
private func isFinite(_ value: JSONValue) -> Bool {
    switch value {
    case .number(let number): return number.isFinite
    case .array(let elements): return elements.allSatisfy(isFinite)
    case .object(let members): return members.values.allSatisfy(isFinite)
    default: return true
    }
}

/// A random JSON text with the shapes servers send (nested objects and arrays, escapes, non-ASCII,
/// integers at the edges, fractions and exponents), written by hand so it may use any spelling.
private func randomDocument(_ random: inout SplitMix64, depth: Int = 0) -> String {
    let pieces = [
        "\"plain\"", "\"Номер\"", "\"tab\\tquote\\\"slash\\/back\\\\\"", "\"\\u00e9\\u0416\\ud83d\\ude00\"",
        "\"\\b\\f\\n\\r\"", "\"😀 ü\"", "\"\"", "0", "-0", "1", "-1", "42", "9223372036854775807",
        "-9223372036854775808", "9223372036854775808", "-9223372036854775809", "12345678901234567890",
        "1.5", "-0.25", "1e3", "1E-3", "2.5e+10", "0.1", "1.0", "true", "false", "null",
    ]
    let spaces = ["", " ", "\n", "\t", "\r\n  "]
    func space(_ random: inout SplitMix64) -> String { spaces[Int(random.next() % UInt64(spaces.count))] }
    switch depth >= 4 ? 0 : random.next() % 4 {
    case 1:
        let count = Int(random.next() % 5)
        let elements = (0..<count).map { _ in
            space(&random) + randomDocument(&random, depth: depth + 1) + space(&random)
        }
        return "[" + elements.joined(separator: ",") + "]"
    case 2:
        let keys = ["a", "id", "signature_id", "Номер", "k\\u0041", "a"]
        let count = Int(random.next() % 5)
        let members = (0..<count).map { _ in
            let key = keys[Int(random.next() % UInt64(keys.count))]
            return space(&random) + "\"\(key)\"" + space(&random) + ":" + space(&random)
                + randomDocument(&random, depth: depth + 1) + space(&random)
        }
        return "{" + members.joined(separator: ",") + "}"
    default:
        return pieces[Int(random.next() % UInt64(pieces.count))]
    }
}

@Suite("JSON parser (strict RFC 8259, against Foundation's JSONSerialization)")
struct JSONParserTests {
    @Test("random documents and their mutations: the same value as JSONSerialization, or refused by both")
    func differential() throws {
        var random = SplitMix64(seed: 0x15)
        var accepted = 0
        var refused = 0
        for round in 0..<3000 {
            let document = Array(randomDocument(&random).utf8)
            var inputs = [document]
            if !document.isEmpty {
                // A flipped byte, a cut, and a byte from JSON's alphabet written over one.
                var flipped = document
                flipped[Int(random.next() % UInt64(document.count))] ^= UInt8(1 << (random.next() % 8))
                let cut = Array(document.prefix(Int(random.next() % UInt64(document.count))))
                var overwritten = document
                let alphabet = Array("{}[],:\"\\ -+.eE0123456789tfnu".utf8)
                overwritten[Int(random.next() % UInt64(document.count))] =
                    alphabet[Int(random.next() % UInt64(alphabet.count))]
                inputs += [flipped, cut, overwritten]
            }
            for input in inputs {
                let ours = try? JSONValue(parsing: input)
                var reference = foundationReading(input)
                // Foundation accepts what RFC 8259 does not: a comma before `]` or `}`, and numbers
                // too large for a double (read as infinity, or, with a long exponent, as nonsense:
                // `-9223372036854e75808` came back as 1). Ours refuses these, on purpose.
                let text = String(decoding: input, as: UTF8.self)
                if ours == nil, let accepted = reference,
                    text.contains(/,[ \t\r\n]*[\]}]/) || text.contains(/[eE][+-]?[0-9]{4}/) || !isFinite(accepted)
                {
                    reference = nil
                }
                #expect(agrees(ours, reference), "round \(round): \(String(decoding: input, as: UTF8.self))")
                if ours == nil { refused += 1 } else { accepted += 1 }
            }
        }
        // The corpus exercises both sides.
        #expect(accepted > 3000)
        #expect(refused > 2000)
    }

    @Test(
        "refuses what RFC 8259 does not allow",
        arguments: [
            "", " ", "{", "[1,]", "{\"a\":1,}", "[01]", "[-]", "[1.]", "[.5]", "[+1]", "[1e]", "[1e+]", "[NaN]",
            "[Infinity]", "['a']", "{a:1}", "{\"a\" 1}", "[1 2]", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"",
            "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\u{01}b\"", "\"tab\tinside\"", "[1]]", "nul", "truex",
            "[1e999]", "\u{FEFF}\u{FEFF}1",
        ]
    )
    func refusals(text: String) throws {
        let error = try #require(throws: JSONError.self) { try JSONValue(parsing: text) }
        #expect(error.code == .malformed)
        #expect(error.message.contains("at byte"))
    }

    @Test("invalid UTF-8 inside a string is refused; a leading byte order mark is skipped")
    func encodings() throws {
        for bad: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0xFE, 0xFF, 0x31],
        ] {
            #expect(throws: JSONError.self) { try JSONValue(parsing: bad) }
        }
        #expect(try JSONValue(parsing: [0xEF, 0xBB, 0xBF] + Array("[1]".utf8)) == [1])
    }

    @Test("nesting: 512 levels parse, 513 are refused without exhausting the stack")
    func depth() throws {
        let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        var value = try JSONValue(parsing: deepest)
        var levels = 0
        while case .array(let elements) = value {
            levels += 1
            guard let first = elements.first else { break }
            value = first
        }
        #expect(levels == 512)
        let tooDeep = String(repeating: "{\"a\":", count: 513) + "1" + String(repeating: "}", count: 513)
        let error = try #require(throws: JSONError.self) { try JSONValue(parsing: tooDeep) }
        #expect(error.message.contains("nesting deeper than 512"))
        #expect(throws: JSONError.self) {
            try JSONValue(parsing: String(repeating: "[", count: 100_000))
        }
    }

    @Test("numbers: correctly rounded doubles (values from Python's float), integers exactly")
    func numbers() throws {
        let value = try JSONValue(
            parsing: "[-922337203.854775808, 0.1, 1E-3, 2.5e+10, -0, -9223372036814775809, 9223372036854775808]"
        )
        #expect(
            value == [
                .number(-922337203.8547758), .number(0.1), .number(0.001), .number(2.5e10), .integer(0),
                .integer(-9_223_372_036_814_775_809), .number(9.223372036854776e18),
            ]
        )
    }

    @Test("long strings: a control character, invalid byte, escape or non-ASCII at any offset is seen")
    func longStrings() throws {
        for position in 0..<24 {
            var plain = [UInt8](repeating: UInt8(ascii: "a"), count: 24)
            plain[position] = 0x01
            #expect(throws: JSONError.self) { try JSONValue(parsing: [0x22] + plain + [0x22]) }
            plain[position] = 0xFF
            #expect(throws: JSONError.self) { try JSONValue(parsing: [0x22] + plain + [0x22]) }
            let escaped = String(repeating: "a", count: position) + "\\n" + String(repeating: "b", count: 24 - position)
            #expect(
                try JSONValue(parsing: "\"\(escaped)\"")
                    == .string(
                        String(repeating: "a", count: position) + "\n" + String(repeating: "b", count: 24 - position)
                    )
            )
            let accented = String(repeating: "a", count: position) + "é" + String(repeating: "b", count: 24 - position)
            #expect(try JSONValue(parsing: "\"\(accented)\"") == .string(accented))
            let early = String(repeating: "c", count: position)
            #expect(
                try JSONValue(parsing: "[\"\(early)\", \"\(String(repeating: "d", count: 24))\"]") == [
                    .string(early), .string(String(repeating: "d", count: 24)),
                ]
            )
        }
    }

    @Test("base64 fields: plain and with line breaks decode alike; nothing but text outside the alphabet is refused")
    func base64Fields() throws {
        let bytes = (0..<300).map { UInt8($0 % 256) }
        let plain = Data(bytes).base64EncodedString()
        let wrapped = Data(bytes).base64EncodedString(options: [.lineLength64Characters])
        #expect(wrapped.contains("\r\n"))
        let reader = try JSONObjectReader(["plain": .string(plain), "wrapped": .string(wrapped)], context: "test")
        #expect(try reader.base64("plain") == bytes)
        #expect(try reader.base64("wrapped") == bytes)
        let bad = try JSONObjectReader(["blob": "@@@"], context: "test")
        #expect(throws: JSONError.self) { try bad.base64("blob") }
    }

    @Test("escapes decode to their characters; duplicate keys keep the last value; Data and slices parse")
    func decoding() throws {
        let value = try JSONValue(parsing: #"{"s": "\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00", "k": 1, "k": 2}"#)
        #expect(value["s"] == .string("\"\\/\u{08}\u{0C}\n\r\tAé😀"))
        #expect(value["k"] == .integer(2))
        let bytes = Array("xx[1, \"a\"]yy".utf8)
        #expect(try JSONValue(parsing: bytes[2..<10]) == [1, "a"])
        #expect(try JSONValue(parsing: Data("[true]".utf8)) == [true])
    }
}
