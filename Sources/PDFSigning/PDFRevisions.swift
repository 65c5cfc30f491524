import CertificateProviders
import Foundation

/// The revisions of a PDF as its cross-reference chain describes them: from the last `startxref`
/// back through every `/Prev` (tables and streams alike), each section's revision ending just after
/// the `startxref N` that follows it (and its `%%EOF` and end of line, when present). `%%EOF`
/// markers alone decide nothing: an update without one is still a revision, and a marker that no
/// cross-reference section leads to is not.
///
/// A linearized file's first-page section is a revision of its own (it ends at its own
/// `startxref`), so such a file starts with two.
struct PDFRevisions: Sendable, Equatable {
    /// Where each revision ends (exclusive), ascending.
    let ends: [Int64]
    /// Bytes after the last revision that are not whitespace: no cross-reference section describes
    /// them (0 normally).
    let unreferencedBytes: Int64
    /// Why the chain could not be followed to its start; nil when it was.
    let problem: String?

    private static let maximumSections = 100_000

    /// Reads the chain of `file`.
    static func read(_ file: borrowing PDFFile) throws -> PDFRevisions {
        let tailLength = Int(min(file.size, 4096))
        let tail = try file.read(at: file.size - Int64(tailLength), count: tailLength)
        guard let marker = PDFBytes.lastIndex(of: Array("startxref".utf8), in: tail) else {
            return PDFRevisions(
                ends: [],
                unreferencedBytes: file.size,
                problem: "the file has no startxref near its end"
            )
        }
        let markerOffset = file.size - Int64(tailLength) + Int64(marker)
        guard let (last, lastEnd) = try startxref(at: markerOffset, in: file) else {
            return PDFRevisions(ends: [], unreferencedBytes: file.size, problem: "the last startxref has no offset")
        }
        var ends: Set<Int64> = [lastEnd]
        var offset: Int64? = last
        var seen = Set<Int64>()
        var problem: String?
        while let section = offset {
            guard seen.insert(section).inserted, seen.count <= maximumSections else {
                problem = "the cross-reference chain loops (offset \(section) again)"
                break
            }
            guard section >= 0, section < file.size, let parsed = try Self.section(at: section, in: file) else {
                problem = "no cross-reference section at offset \(section)"
                break
            }
            if let end = parsed.end { ends.insert(end) }
            offset = parsed.previous
        }
        let sorted = ends.sorted()
        let final = sorted.last ?? 0
        let trailing = try file.read(at: final, count: Int(min(file.size - final, 1 << 20)))
        let unreferenced =
            trailing.allSatisfy(PDFBytes.isWhitespace) && file.size - final <= 1 << 20 ? 0 : file.size - final
        return PDFRevisions(ends: sorted, unreferencedBytes: unreferenced, problem: problem)
    }

    /// The 1-based revision a signed range ending at `end` covers, when `end` is a revision's end.
    func revision(endingAt end: Int64) -> Int? {
        ends.firstIndex(of: end).map { $0 + 1 }
    }

    /// The section at `offset`: the `/Prev` of its trailer (or stream dictionary) and where its
    /// revision ends (after the first `startxref` following it).
    private static func section(
        at offset: Int64,
        in file: borrowing PDFFile
    ) throws -> (
        previous: Int64?, end: Int64?
    )? {
        let head = try file.read(at: offset, count: 64)
        var start = 0
        while start < head.count, PDFBytes.isWhitespace(head[start]) { start += 1 }
        let isTable = Array(head[start...]).starts(with: Array("xref".utf8))
        let isStream =
            String(bytes: head[start...], encoding: .isoLatin1)?
            .range(of: #"^\d+\s+\d+\s+obj"#, options: .regularExpression) != nil
        guard isTable || isStream else { return nil }
        // The dictionary that holds /Prev: the trailer up to its startxref, or the stream's
        // dictionary up to `stream`. Read in growing windows (a table can be long).
        var window = 1 << 16
        while true {
            let bytes = try file.read(at: offset, count: window)
            let startMarker = PDFBytes.firstIndex(of: Array("startxref".utf8), in: bytes)
            let dictionaryEnd: Int?
            let dictionaryStart: Int
            if isTable {
                dictionaryStart = PDFBytes.firstIndex(of: Array("trailer".utf8), in: bytes) ?? bytes.count
                dictionaryEnd = startMarker
            } else {
                dictionaryStart = 0
                dictionaryEnd = PDFBytes.firstIndex(of: Array("stream".utf8), in: bytes)
            }
            if let dictionaryEnd, dictionaryStart < dictionaryEnd, let startMarker {
                let text = String(decoding: bytes[dictionaryStart..<dictionaryEnd], as: UTF8.self)
                let previous = text.firstMatch(of: #/\/Prev\s+(\d{1,19})/#).flatMap { Int64($0.1) }
                let end = try startxref(at: offset + Int64(startMarker), in: file)?.end
                return (previous, end)
            }
            guard bytes.count == window, window < 1 << 28 else {
                // No startxref after the section: its dictionary alone, when readable.
                guard let dictionaryEnd, dictionaryStart < dictionaryEnd else { return nil }
                let text = String(decoding: bytes[dictionaryStart..<dictionaryEnd], as: UTF8.self)
                return (text.firstMatch(of: #/\/Prev\s+(\d{1,19})/#).flatMap { Int64($0.1) }, nil)
            }
            window *= 4
        }
    }

    /// The offset a `startxref` at `markerOffset` names, and where its revision ends: after the
    /// number, then after `%%EOF` and one end of line when they follow.
    private static func startxref(
        at markerOffset: Int64,
        in file: borrowing PDFFile
    ) throws -> (offset: Int64, end: Int64)? {
        let bytes = try file.read(at: markerOffset, count: 64)
        var index = 9
        while index < bytes.count, PDFBytes.isWhitespace(bytes[index]) { index += 1 }
        var value: Int64 = 0
        var digits = 0
        while index < bytes.count, (0x30...0x39).contains(bytes[index]), digits < 19 {
            value = value * 10 + Int64(bytes[index] - 0x30)
            index += 1
            digits += 1
        }
        guard digits > 0 else { return nil }
        var end = index
        var cursor = index
        while cursor < bytes.count, PDFBytes.isWhitespace(bytes[cursor]) { cursor += 1 }
        let eof = Array("%%EOF".utf8)
        if cursor + eof.count <= bytes.count, Array(bytes[cursor..<(cursor + eof.count)]) == eof {
            end = cursor + eof.count
            if end < bytes.count, bytes[end] == 0x0D { end += 1 }
            if end < bytes.count, bytes[end] == 0x0A { end += 1 }
        }
        return (value, markerOffset + Int64(end))
    }
}
