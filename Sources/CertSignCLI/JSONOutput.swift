import Foundation

/// Builds the JSON documents `--json` prints: sorted keys, UTF-8 kept (Cyrillic intact).
enum JSONOutput {
    static func render(_ object: Any) -> String {
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(
                withJSONObject: object,
                options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            )
        else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The JSON of an `Encodable` value, formatted as ``render(_:)`` formats: sorted keys, UTF-8 kept.
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
