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

    private static let maximumSections = 10_000

    /// Reads the chain of `file`: one pass finds every `startxref`; each section's revision ends
    /// after the first one that follows it, and its `/Prev` is read near it (a few KiB per
    /// section, so a hostile chain costs little).
    static func read(_ file: borrowing PDFFile) throws -> PDFRevisions {
        let markers = try file.positions(of: Array("startxref".utf8))
        guard let lastMarker = markers.last, let (last, lastEnd) = try startxref(at: lastMarker, in: file) else {
            return PDFRevisions(
                ends: [],
                unreferencedBytes: file.size,
                problem: "the file has no startxref with an offset"
            )
        }
        var ends: Set<Int64> = [lastEnd]
        var offset: Int64? = last
        var seen = Set<Int64>()
        var problem: String?
        while let section = offset {
            guard seen.insert(section).inserted, seen.count <= maximumSections else {
                problem =
                    seen.count > maximumSections
                    ? "the cross-reference chain has more than \(maximumSections) sections"
                    : "the cross-reference chain loops (offset \(section) again)"
                break
            }
            // The first startxref after the section ends its revision.
            let next = Self.first(in: markers, after: section)
            guard section >= 0, section < file.size, let next,
                let previous = try Self.previous(section: section, startxref: next, in: file)
            else {
                problem = "no cross-reference section at offset \(section)"
                break
            }
            if let end = try startxref(at: next, in: file)?.end { ends.insert(end) }
            offset = previous.previous
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

    /// A cross-reference section: what its `/Prev` names.
    private struct Section {
        let previous: Int64?
    }

    /// The `/Prev` of the section at `offset` (nil inside when it has none): read from a table's
    /// trailer (just before `startxref`) or a stream's dictionary (just after `obj`); nil when
    /// no section starts there.
    private static func previous(
        section offset: Int64,
        startxref: Int64,
        in file: borrowing PDFFile
    ) throws
        -> Section?
    {
        let head = try file.read(at: offset, count: 64)
        var start = 0
        while start < head.count, PDFBytes.isWhitespace(head[start]) { start += 1 }
        let isTable = Array(head[start...]).starts(with: Array("xref".utf8))
        let isStream = startsObject(head[start...])
        guard isTable || isStream else { return nil }
        for window in [Int64(4096), 65536] {
            let text: [UInt8]
            if isTable {
                let from = max(offset, startxref - window)
                let bytes = try file.read(at: from, count: Int(startxref - from))
                guard let trailer = PDFBytes.lastIndex(of: Array("trailer".utf8), in: bytes) else {
                    if from == offset { return nil }
                    continue
                }
                text = Array(bytes[trailer...])
            } else {
                let bytes = try file.read(at: offset, count: Int(min(window, startxref - offset)))
                guard let stream = PDFBytes.firstIndex(of: Array("stream".utf8), in: bytes) else {
                    if Int64(bytes.count) < window { return nil }
                    continue
                }
                text = Array(bytes[..<stream])
            }
            return Section(previous: previousOffset(in: text))
        }
        return nil
    }

    /// The first of the ascending `offsets` after `offset`.
    private static func first(in offsets: [Int64], after offset: Int64) -> Int64? {
        var (low, high) = (0, offsets.count)
        while low < high {
            let middle = (low + high) / 2
            if offsets[middle] > offset { high = middle } else { low = middle + 1 }
        }
        return low < offsets.count ? offsets[low] : nil
    }

    /// Whether `bytes` start with `N G obj` (digits, whitespace, digits, whitespace, `obj`).
    private static func startsObject(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        for _ in 0..<2 {
            let digits = index
            while index < bytes.endIndex, (0x30...0x39).contains(bytes[index]) { index += 1 }
            let spaces = index
            while index < bytes.endIndex, isSpace(bytes[index]) { index += 1 }
            guard index > spaces, spaces > digits else { return false }
        }
        return bytes[index...].starts(with: Array("obj".utf8))
    }

    /// The number after the first `/Prev` that whitespace and digits follow (at most 19 digits).
    private static func previousOffset(in text: [UInt8]) -> Int64? {
        let key = Array("/Prev".utf8)
        var from = 0
        while let hit = PDFBytes.firstIndex(of: key, in: text, from: from) {
            var index = hit + key.count
            let spaces = index
            while index < text.count, isSpace(text[index]) { index += 1 }
            let digits = index
            while index < text.count, index - digits < 19, (0x30...0x39).contains(text[index]) { index += 1 }
            if digits > spaces, index > digits { return Int64(String(decoding: text[digits..<index], as: UTF8.self)) }
            from = hit + 1
        }
        return nil
    }

    /// Whitespace as the chain's syntax allows it between a key and its number.
    private static func isSpace(_ byte: UInt8) -> Bool { (0x09...0x0D).contains(byte) || byte == 0x20 }

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
