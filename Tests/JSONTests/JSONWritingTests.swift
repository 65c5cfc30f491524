import Foundation
import JSON
import TestSupport
import Testing

/// What Foundation's JSONEncoder writes for a value (the reference for `jsonBytes()`).
private func foundationBytes(_ value: JSONValue) throws -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return Array(try encoder.encode(value))
}

/// Random strings over every ASCII byte (controls, quote, backslash, slash) and some non-ASCII text.
private func randomString(_ random: inout SplitMix64, asciiOnly: Bool) -> String {
    let extra = ["é", "€", "😀", "\u{2028}", "ПланированиеБюджета"]
    var text = ""
    for _ in 0..<Int.random(in: 0...12, using: &random) {
        if !asciiOnly && Int.random(in: 0..<6, using: &random) == 0 {
            text += extra[Int.random(in: 0..<extra.count, using: &random)]
        } else {
            text.unicodeScalars.append(Unicode.Scalar(UInt8.random(in: 0...0x7F, using: &random)))
        }
    }
    return text
}

private func randomValue(_ random: inout SplitMix64, depth: Int) -> JSONValue {
    switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &random) {
    case 0: return .null
    case 1: return .bool(Bool.random(using: &random))
    case 2:
        let special = [Int.min, Int.max, 0, -1]
        return .integer(
            Int.random(in: 0..<4, using: &random) == 0
                ? special[Int.random(in: 0..<special.count, using: &random)]
                : Int.random(in: -100_000...100_000, using: &random)
        )
    case 3, 4: return .string(randomString(&random, asciiOnly: false))
    case 5:
        return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in randomValue(&random, depth: depth + 1) })
    default:
        var members: [String: JSONValue] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            members[randomString(&random, asciiOnly: true)] = randomValue(&random, depth: depth + 1)
        }
        return .object(members)
    }
}

@Suite("JSONValue.jsonBytes writes what JSONEncoder writes, byte for byte")
struct JSONWritingTests {
    @Test("escapes, key order, integers, nesting and request-shaped bodies match JSONEncoder")
    func fixedValues() throws {
        let everyASCII = String(String.UnicodeScalarView((0...0x7F).map { Unicode.Scalar(UInt8($0)) }))
        let values: [JSONValue] = [
            .null, true, false, 0, .integer(Int.min), .integer(Int.max), "", "a/b", .string(everyASCII),
            "é€😀\u{2028}\u{7F}", [], [:], [[], [[:]]],
            ["b": 1, "B": 2, "a10": 3, "a9": 4, "_x": 5, "Z": 6, "a": 10, "A": 11, "aB": 12, "Ab": 13, "": 14],
            [
                "Content": .string(Data(repeating: 0x78, count: 4096).base64EncodedString()),
                "Signature": [
                    "CertificateId": 12831, "Parameters": ["CADESType": "BES", "Hash": "False"], "PinCode": "x",
                    "Type": "CAdES",
                ],
            ],
            ["resource": "GetBudgetPlanning", "table": "ПланированиеБюджета", "params": [:], "hhive_id": 1],
        ]
        for value in values {
            #expect(try value.jsonBytes() == foundationBytes(value), "\(value)")
        }
    }

    /// Across the eight-byte words the writer and the parser skip whole.
    @Test("a character to escape (or a non-ASCII one) at every place of strings up to 20 bytes long")
    func specialAtEveryPlace() throws {
        for special in ["\"", "\\", "\n", "\u{01}", "\u{1F}", "\u{7F}", "é", "😀"] {
            for length in 1...20 {
                for place in 0..<length {
                    var characters = Array(repeating: "a", count: length)
                    characters[place] = special
                    let value = JSONValue.string(characters.joined())
                    let written = try value.jsonBytes()
                    #expect(written == (try foundationBytes(value)), "\(value)")
                    #expect(try JSONValue(parsing: written) == value, "\(value)")
                }
            }
        }
    }

    @Test("500 random documents match JSONEncoder")
    func randomValues() throws {
        var random = SplitMix64(seed: 15)
        for _ in 0..<500 {
            let value = randomValue(&random, depth: 0)
            #expect(try value.jsonBytes() == foundationBytes(value), "\(value)")
        }
    }

    @Test("values the direct writer leaves to JSONEncoder (non-ASCII keys, fractional numbers) still match it")
    func fallbacks() throws {
        let values: [JSONValue] = [
            ["é": 1, "e": 2, "z": 3], ["n": .number(1.5)], [.number(2), .number(1e20), .number(-0.0)],
            ["deep": [["x": .number(0.1)]]],
        ]
        for value in values {
            #expect(try value.jsonBytes() == foundationBytes(value), "\(value)")
        }
        let error = try #require(throws: JSONError.self) { try JSONValue.array([.number(.nan)]).jsonBytes() }
        #expect(error.code == .unencodable)
    }
}
