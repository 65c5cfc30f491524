import CertificateProviders
import Foundation
import HTTPClient
import Signing

/// The conversions options and arguments run when the command line is parsed: a value that does not
/// convert is an ``InvalidValue`` naming the option (a usage error, exit 64), so the command body
/// gets typed values only.
enum ValueConversions {
    /// A digest algorithm by name (`sha256`, `streebog256`, …).
    static func digest(_ name: String) throws -> DigestAlgorithm {
        guard let digest = DigestAlgorithm(name: name) else {
            throw InvalidValue(message: "unknown --digest '\(name)' (\(Help.alternatives(digestNames)))")
        }
        return digest
    }

    /// The names `--digest` takes, as help lists them.
    static let digestNames = ["sha256", "sha384", "sha512", "streebog256", "streebog512"]

    /// An http:// or https:// URL with a host; `message` says what is wrong otherwise.
    static func httpURL(_ text: String, message: (String) -> String) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            url.host != nil
        else {
            throw InvalidValue(message: message(text))
        }
        return url
    }

    /// `--tsa URL`: an http:// or https:// URL.
    static func timestampAuthority(_ text: String) throws -> URL {
        try httpURL(text) { "--tsa '\($0)' is not an http:// or https:// URL" }
    }

    /// A baseline level: b-b, b-t, b-lt or b-lta.
    static func level(_ text: String) throws -> SignatureLevel {
        guard let level = SignatureLevel(text) else {
            throw InvalidValue(message: "unknown --level '\(text)' (b-b, b-t, b-lt or b-lta)")
        }
        return level
    }

    /// A signature id or a prefix of one: not empty, no white space or control characters (no id
    /// has them; 'certsign signatures list' prints the ids).
    static func signatureID(_ text: String) throws -> String {
        guard !text.isEmpty else {
            throw InvalidValue(message: "the signature id is empty ('certsign signatures list' prints the ids)")
        }
        guard
            !text.unicodeScalars.contains(where: {
                $0.properties.isWhitespace || $0.properties.generalCategory == .control
            })
        else {
            throw InvalidValue(
                message:
                    "'\(text.filter { !$0.isNewline })' is not a signature id: ids have no white space or control "
                    + "characters ('certsign signatures list' prints them)"
            )
        }
        return text
    }

    /// A value that must not be empty (`--user ""` is as good as missing).
    static func nonEmpty(_ option: String) -> (String) throws -> String {
        { text in
            guard !text.isEmpty else { throw InvalidValue(message: "\(option) is required") }
            return text
        }
    }

    /// The trust `--trust` adds: `system` (the system's trusted roots) or `eu` (the EU trusted lists
    /// of the verified cache).
    static func trust(_ text: String) throws -> TrustSource? {
        guard let source = TrustSource(rawValue: text) else {
            throw InvalidValue(
                message: "unknown --trust '\(text)' (system or eu; name your own anchors with --ca FILE)"
            )
        }
        return source
    }

    /// A validation time (`--at`): a date (`2030-01-01`, midnight UTC), an ISO 8601 date-time with or
    /// without a zone (`2030-01-01T12:00:00Z`, `2030-01-01T12:00:00+02:00`, `2030-01-01T12:00:00` in
    /// UTC; fractional seconds allowed), or a duration from `now`: a sign, a whole number and a unit
    /// `y`, `m` (months), `w`, `d` or `h` (`+5y`, `+6m`, `+30d`, `-1y`).
    static func time(_ text: String) throws -> Date { try time(text, now: Date()) }

    /// ``time(_:)`` with the present given, for durations.
    static func time(_ text: String, now: Date) throws -> Date {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let time = isoTime(trimmed) ?? relativeTime(trimmed, now: now) { return time }
        throw InvalidValue(
            message: "--at '\(text)' is not a time: give a date (2030-01-01), a date-time (2030-01-01T12:00:00Z, "
                + "a zone optional, UTC without one) or a duration from now (+5y, +6m, +30d, -1y; units y, m "
                + "for months, w, d, h)"
        )
    }

    private static func isoTime(_ text: String) -> Date? {
        // The formatters accept trailing text after a date; the whole of it must be one of the forms.
        let form = #/\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?)?/#
        guard text.wholeMatch(of: form) != nil else { return nil }
        // The formatters read a date before any trailing text: a date-time is read only as one.
        let options: [ISO8601DateFormatter.Options] =
            text.contains("T")
            ? [
                [.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds],
                [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate],
                [
                    .withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate,
                    .withFractionalSeconds,
                ],
            ]
            : [[.withFullDate, .withDashSeparatorInDate]]
        for option in options {
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.formatOptions = option
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    private static func relativeTime(_ text: String, now: Date) -> Date? {
        guard let sign = text.first, sign == "+" || sign == "-", let unit = text.last,
            let count = Int(text.dropFirst().dropLast()), count >= 0, count <= 10_000
        else { return nil }
        let amount = sign == "-" ? -count : count
        var components = DateComponents()
        switch unit {
        case "y": components.year = amount
        case "m": components.month = amount
        case "w": components.day = amount * 7
        case "d": components.day = amount
        case "h": components.hour = amount
        default: return nil
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar.date(byAdding: components, to: now)
    }

    /// A duration: whole seconds (`3600`), or a number with a unit `s`, `m`, `h`, `d` (`90s`, `30m`,
    /// `12h`, `7d`); positive. `option` names the option in the error.
    static func duration(_ option: String) -> (String) throws -> TimeInterval {
        { text in
            let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
            let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
            let unit = trimmed.last.flatMap { units[$0] }
            let number = unit == nil ? trimmed : String(trimmed.dropLast())
            guard let value = UInt32(number), value > 0 else {
                throw InvalidValue(
                    message: "\(option) '\(text)' is not a duration such as 3600, 90s, 30m, 12h or 7d"
                )
            }
            return TimeInterval(value) * (unit ?? 1)
        }
    }
}

/// What `verify --trust` adds to the trust anchors.
enum TrustSource: String, Sendable {
    /// The system's trusted roots.
    case system
    /// The EU trusted lists of the verified cache.
    case eu
}
