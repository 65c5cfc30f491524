import CertificateProviders
import Foundation
import HTTPClient
public import JSON
import RemoteProviderSupport

/// The seed sample's helpers and the decoding of the platform's answers.
extension FMPClient {
    // MARK: Seed helpers

    /// The sample's `getSignatureId(from:)`: `result.raw.signature_id` when the status is `ok`.
    public static func signatureID(from envelope: FMPEnvelope) -> Int? {
        signatureID(from: envelope.jsonValue)
    }

    /// The sample's `getSignatureId(from:)` over an envelope's JSON.
    public static func signatureID(from json: JSONValue?) -> Int? {
        guard responseStatus(from: json) == "ok" else { return nil }
        return json?["result"]?["raw"]?["signature_id"]?.intValue
    }

    /// The sample's `getResponseStatus(from:)`: the envelope's `status`.
    public static func responseStatus(from envelope: FMPEnvelope) -> String? { envelope.status }

    /// The sample's `getResponseStatus(from:)` over an envelope's JSON.
    public static func responseStatus(from json: JSONValue?) -> String? { json?["status"]?.stringValue }

    // MARK: Response decoding (package: also the fuzz harness's entry points, Tests/Fuzz)

    /// Decodes a successful token answer (auth or refresh) into a reader over its members; the
    /// caller reads `token` and `refresh_token`.
    package static func decodeTokens(_ response: HTTPResponse, context: String) throws -> JSONObjectReader {
        try JSONObjectReader(try response.json(context: context), context: context, errorCode: .network)
    }

    /// Decodes `result.raw` of a certificates answer.
    package static func decodeCertificates(_ raw: JSONValue) throws -> [FMPCertificate] {
        let reader = try JSONObjectReader(raw, context: "FMP certificates", errorCode: .network)
        return try reader.objects("certificates").map { entry -> FMPCertificate in
            let der = try entry.base64("certificate")
            let certificate: Certificate
            do {
                certificate = try Certificate(derEncoded: der)
            } catch {
                throw CertificateProviderError(
                    .network,
                    "FMP certificates: field '\(entry.path)certificate' is not a DER certificate"
                )
            }
            return FMPCertificate(
                id: try entry.int("id"),
                subject: try entry.optionalString("subject") ?? certificate.subject,
                issuer: try entry.optionalString("issuer") ?? certificate.issuer,
                serial: try entry.optionalString("serial") ?? certificate.serialNumber,
                notBefore: try entry.optionalString("not_before").flatMap(FMPClient.date),
                notAfter: try entry.optionalString("not_after").flatMap(FMPClient.date),
                hasPIN: try entry.value("has_pin").map { _ in try entry.bool("has_pin") } ?? true,
                certificate: certificate
            )
        }
    }

    /// Decodes `result.raw` of a sign answer: the signature id.
    package static func decodeSignResult(_ raw: JSONValue) throws -> Int {
        try JSONObjectReader(raw, context: "FMP sign", errorCode: .network).int("signature_id")
    }

    /// Decodes `result.raw` of a signs answer.
    package static func decodeSigns(_ raw: JSONValue) throws -> [FMPSignature] {
        try JSONObjectReader(raw, context: "FMP signs", errorCode: .network).objects("signs").map { entry in
            FMPSignature(
                id: try entry.int("signature_id"),
                resource: try entry.string("resource"),
                table: try entry.string("table"),
                column: try entry.string("column"),
                hhiveID: try entry.int("hhive_id"),
                certificateID: try entry.int("certificate_id"),
                createdAt: try entry.optionalString("created_at").flatMap(FMPClient.date),
                signature: try entry.value("signature").map { _ in try entry.base64("signature") } ?? []
            )
        }
    }

    // MARK: Dates

    private static let iso8601 = Date.ISO8601FormatStyle()

    /// An ISO 8601 date as the platform writes it. The common form, `YYYY-MM-DDTHH:MM:SSZ` with a
    /// valid calendar date from 1583 on, is read directly (ISO8601FormatStyle cost ~1.5 µs a date, a
    /// third of decoding a signs entry); anything else goes to ISO8601FormatStyle (which, like
    /// Foundation's Gregorian calendar, counts dates before the 1582 reform as Julian).
    package static func date(_ text: String) -> Date? {
        if let date = utcSecondsDate(text) { return date }
        return try? iso8601.parse(text)
    }

    private static func utcSecondsDate(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
                bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
                bytes[19] == UInt8(ascii: "Z")
            else { return nil }
            func number(_ start: Int, _ count: Int) -> Int? {
                var value = 0
                for index in start..<(start + count) {
                    let digit = Int(bytes[index]) - Int(UInt8(ascii: "0"))
                    guard (0...9).contains(digit) else { return nil }
                    value = value * 10 + digit
                }
                return value
            }
            guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
                let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
                year >= 1583, (1...12).contains(month), hour < 24, minute < 60, second < 60
            else { return nil }
            let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            let monthDays = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            guard (1...monthDays[month - 1]).contains(day) else { return nil }
            // Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
            let shiftedYear = month <= 2 ? year - 1 : year
            let era = shiftedYear / 400  // shiftedYear is positive here
            let yearOfEra = shiftedYear - era * 400
            let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            let days = era * 146_097 + dayOfEra - 719_468
            return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
        }
    }
}
