import COpenSSL
import COpenSSLShims
import Foundation
import OpenSSLWrappers
import TestSupport
import Testing

/// The one conversion between OpenSSL's `ASN1_TIME` and `Date`, each way, against times the
/// `openssl` command writes: UTCTime for 1950 through 2049 (RFC 5280 4.1.2.5), GeneralizedTime
/// before and after, and the seconds either side of 1970 and of both UTCTime boundaries.
@Suite struct ASN1TimeTests {
    /// An `openssl asn1parse -genstr` value and the instant it names.
    struct Case: Sendable, CustomStringConvertible {
        let generated: String
        let instant: String
        var description: String { generated }
    }

    static let cases: [Case] = [
        Case(generated: "GENTIME:19000101000000Z", instant: "1900-01-01T00:00:00Z"),
        Case(generated: "GENTIME:19491231235959Z", instant: "1949-12-31T23:59:59Z"),
        Case(generated: "UTCTIME:500101000000Z", instant: "1950-01-01T00:00:00Z"),
        Case(generated: "UTCTIME:691231235959Z", instant: "1969-12-31T23:59:59Z"),
        Case(generated: "UTCTIME:700101000000Z", instant: "1970-01-01T00:00:00Z"),
        Case(generated: "UTCTIME:380119031408Z", instant: "2038-01-19T03:14:08Z"),
        Case(generated: "UTCTIME:491231235959Z", instant: "2049-12-31T23:59:59Z"),
        Case(generated: "GENTIME:20500101000000Z", instant: "2050-01-01T00:00:00Z"),
        Case(generated: "GENTIME:99991231235959Z", instant: "9999-12-31T23:59:59Z"),
    ]

    /// The DER `openssl` writes for `-genstr value`.
    static func opensslDER(_ value: String) throws -> [UInt8] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("asn1time-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("time.der")
        try ExternalTool.run("openssl", ["asn1parse", "-genstr", value, "-noout", "-out", file.path]).requireSuccess()
        return Array(try Data(contentsOf: file))
    }

    static func date(_ instant: String) throws -> Date {
        try #require(ISO8601DateFormatter().date(from: instant), "\(instant) is not an ISO 8601 instant")
    }

    /// The DER of a time made for a date.
    static func der(_ time: ASN1TimeHandle) throws -> [UInt8] {
        try withExtendedLifetime(time) { try der(time.pointer) }
    }

    /// The DER of an `ASN1_TIME`.
    static func der(_ time: OpaquePointer) throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_ASN1_TIME(UnsafeMutablePointer<ASN1_TIME>(time), &output)
        let bytes = try #require(output)
        defer { COpenSSLShims_OPENSSL_free(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(length)))
    }

    @Test("an ASN1_TIME openssl wrote reads as the instant it names", arguments: cases)
    func readsWhatOpenSSLWrote(_ sample: Case) throws {
        let der = try Self.opensslDER(sample.generated)
        let time = try der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return try #require(d2i_ASN1_TIME(nil, &cursor, buffer.count), "OpenSSL cannot read \(sample)")
        }
        defer { ASN1_TIME_free(time) }
        #expect(ASN1Time.date(of: OpaquePointer(time)) == (try Self.date(sample.instant)))
    }

    @Test(
        "a date is written as openssl writes it: UTCTime from 1950 through 2049, GeneralizedTime else",
        arguments: cases
    )
    func writesWhatOpenSSLWrites(_ sample: Case) throws {
        let expected = try Self.opensslDER(sample.generated)
        let date = try Self.date(sample.instant)
        #expect(try Self.der(ASN1TimeHandle(date)) == expected)
        // Setting an existing time (a certificate's notBefore) gives the same encoding.
        let existing = try #require(ASN1_TIME_new())
        defer { ASN1_TIME_free(existing) }
        #expect(ASN1Time.set(OpaquePointer(existing), to: date))
        #expect(try Self.der(OpaquePointer(existing)) == expected)
    }

    @Test("a fraction of a second is dropped towards the past, before 1970 as after")
    func fractionsRoundDown() throws {
        for (instant, generated) in [
            ("1969-12-31T23:59:59Z", "UTCTIME:691231235959Z"), ("1949-12-31T23:59:59Z", "GENTIME:19491231235959Z"),
            ("2026-12-07T06:00:00Z", "UTCTIME:261207060000Z"),
        ] {
            let date = try Self.date(instant).addingTimeInterval(0.75)
            #expect(
                try Self.der(ASN1TimeHandle(date)) == (try Self.opensslDER(generated)),
                "\(instant) + 0.75 s"
            )
        }
    }
}
