import CertificateProviders
internal import Durability
import Foundation

/// Formatting for people.
enum Format {
    /// How many issuers came with an identity, in words: "no issuer certificates (self-signed or
    /// leaf only)", "1 issuer certificate", "3 issuer certificates" (the chain never counts the leaf).
    static func issuers(_ count: Int) -> String {
        switch count {
        case 0: return "no issuer certificates (leaf only)"
        case 1: return "1 issuer certificate"
        default: return "\(count) issuer certificates"
        }
    }

    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// A date in local time, `2026-11-29 14:05:09 +0300`.
    /// (The C library's `localtime_r` and `strftime`, as `DateFormatter` would print it: a
    /// formatter costs a locale and calendar set-up per call, which dominated `verify` of many files.)
    static func localDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return isoDate(date) }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S %z", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A date in UTC ISO 8601, for JSON: `2026-11-29T11:05:09Z` (Foundation's format style, which
    /// needs no ICU formatter per call).
    static func isoDate(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle()) }

    /// Lower-case hex digits, two per byte (`prepare` prints thousands of digests).
    static func hex(_ bytes: [UInt8]) -> String { HexText.lowercase(bytes) }

    /// Aligned columns; the header row is followed by nothing fancy so output stays grep-able. Every
    /// cell is ``printable(_:)``: a name with a newline cannot add a row.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = ([header] + rows).map { $0.map(printable) }
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            zip(row, widths).enumerated().map { index, pair in
                index == row.count - 1 ? pair.0 : pair.0.padding(toLength: pair.1, withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}

extension Format {
    /// `text` with every control character (C0, DEL, C1) written as an escape: `\n`, `\r`, `\t`,
    /// `\x1B`, `\u{85}`. Text output shows names a user chose (files, aliases, what a server sent):
    /// raw, a newline in one forges a line of output and an escape sequence rewrites the terminal.
    /// JSON output needs none of this (its encoder escapes them).
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x80 && isControl(scalar):
                escaped += "\\x" + String(format: "%02X", scalar.value)
            case _ where isControl(scalar): escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// The one path form of output: absolute and standardized (`-`, standard input or output, stays `-`).
    static func path(_ path: String) -> String {
        PathText.absolute(path)
    }
}
