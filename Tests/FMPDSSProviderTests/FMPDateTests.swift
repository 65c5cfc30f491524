import FMPDSSProvider
import Foundation
import TestSupport
import Testing

@Suite("FMP dates: the direct reading of YYYY-MM-DDTHH:MM:SSZ agrees with ISO8601FormatStyle")
struct FMPDateTests {
    @Test("random instants from year 1 to 9999, and the calendar's edges")
    func agreesWithFoundation() throws {
        let style = Date.ISO8601FormatStyle()
        var generator = SystemRandomNumberGenerator()
        var texts = (0..<3000).map { _ in
            Date(timeIntervalSince1970: Double.random(in: -62_135_596_800...253_402_300_799, using: &generator))
                .formatted(style)
        }
        texts += [
            "1970-01-01T00:00:00Z", "2000-02-29T12:34:56Z", "2024-02-29T23:59:59Z", "1900-03-01T00:00:00Z",
            "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-12-01T01:54:10Z",
        ]
        for text in texts {
            let expected = try style.parse(text)
            #expect(FMPClient.date(text) == expected, "\(text)")
        }
    }

    @Test("other spellings and impossible dates get ISO8601FormatStyle's answer")
    func othersGoToFoundation() {
        let style = Date.ISO8601FormatStyle()
        for text in [
            "2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-12-32T00:00:00Z", "2026-12-01T24:00:00Z",
            "2026-12-01T23:60:00Z", "2026-12-01T23:59:60Z", "2026-12-01T23:59:59+03:00", "2026-12-01T23:59:59.5Z",
            "2026-12-01 23:59:59Z", "0000-01-01T00:00:00Z", "2026-1a-01T00:00:00Z", "", "yesterday",
        ] {
            #expect(FMPClient.date(text) == (try? style.parse(text)), "\(text)")
        }
    }
}
