import Foundation

/// Builds the JSON documents `--json` prints, all from `Encodable` values: sorted keys, UTF-8 kept
/// (Cyrillic intact).
enum JSONOutput {
    /// The JSON of an `Encodable` value: pretty-printed, sorted keys, slashes and UTF-8 kept.
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
