import Foundation

/// The revisions of a PDF whose cross-reference chain is only classic tables, each made into one
/// self-contained buffer for qpdf: the file's bytes up to the revision's end, then one table that
/// merges every section up to that revision and the revision's trailer without `/Prev`. qpdf then
/// reads one section per revision instead of the whole chain again for each (which made the
/// change analysis quadratic in the number of revisions); each section of the file is parsed
/// once, here, as strictly as qpdf reads it without recovery.
///
/// Built only when every section parses (a table of 20-byte entries, a trailer without
/// `/XRefStm` or `/Encrypt`), each section's `/Prev` names the one before it, and the buffers
/// stay within a budget; otherwise the analysis opens each revision as the file has it.
struct PDFClassicRevisions {
    private struct Entry {
        var offset: Int64
        var generation: Int
        var inUse: Bool
    }

    private struct Section {
        var entries: [(number: Int, entry: Entry)] = []
        /// The trailer dictionary's text, `/Prev` blanked out.
        var trailer: [UInt8] = []
        var previous: Int64?
    }

    private let file: PDFMappedFile
    private let ends: [Int64]
    private let sections: [Section]
    private let highest: Int
    private var merged: [Int: Entry] = [:]
    private var mergedUpTo = 0

    /// The most bytes all the buffers may take together.
    static let defaultBudget: Int64 = 2 << 30

    /// Reads every section of `file` (revision `r` ends at `ends[r - 1]`); nil when the chain is
    /// not only classic tables that parse strictly, or the buffers would exceed `budget`.
    init?(file: PDFMappedFile, ends: [Int64], budget: Int64 = defaultBudget) {
        let bytes = UnsafeRawBufferPointer(start: file.base, count: file.count)
        var sections: [Section] = []
        var offsets: [Int64] = []
        for end in ends {
            guard let offset = Self.startxref(before: Int(end), in: bytes),
                let section = Self.section(at: offset, in: bytes)
            else { return nil }
            sections.append(section)
            offsets.append(Int64(offset))
        }
        for (index, section) in sections.enumerated() {
            guard section.previous == (index == 0 ? nil : offsets[index - 1]) else { return nil }
        }
        let highest = sections.flatMap { $0.entries.map(\.number) }.max() ?? 0
        let table = Int64(highest + 1) * 20 + 64
        guard ends.reduce(Int64(0), { $0 + $1 + table }) <= budget else { return nil }
        self.file = file
        self.ends = ends
        self.sections = sections
        self.highest = highest
    }

    /// The buffer of revision `revision` (1-based); revisions must be asked for in increasing order.
    mutating func buffer(revision: Int) -> [UInt8] {
        while mergedUpTo < revision {
            for (number, entry) in sections[mergedUpTo].entries { merged[number] = entry }
            mergedUpTo += 1
        }
        let end = Int(ends[revision - 1])
        var out = [UInt8](UnsafeRawBufferPointer(start: file.base, count: end))
        out.reserveCapacity(end + (highest + 1) * 20 + sections[revision - 1].trailer.count + 64)
        let start = out.count + 1
        out += Array("\nxref\n0 \(highest + 1)\n".utf8)
        for number in 0...highest {
            let entry = merged[number] ?? Entry(offset: 0, generation: number == 0 ? 65535 : 0, inUse: false)
            Self.append(entry.offset, digits: 10, to: &out)
            out.append(0x20)
            Self.append(Int64(entry.generation), digits: 5, to: &out)
            out += entry.inUse ? [0x20, 0x6E, 0x0D, 0x0A] : [0x20, 0x66, 0x0D, 0x0A]
        }
        out += Array("trailer\n".utf8) + sections[revision - 1].trailer
        out += Array("\nstartxref\n\(start)\n%%EOF\n".utf8)
        return out
    }

    private static func append(_ value: Int64, digits: Int, to out: inout [UInt8]) {
        var text = [UInt8](repeating: 0x30, count: digits)
        var rest = value
        for index in stride(from: digits - 1, through: 0, by: -1) where rest > 0 {
            text[index] = 0x30 + UInt8(rest % 10)
            rest /= 10
        }
        out += text
    }

    /// The offset the last `startxref` before `end` names.
    private static func startxref(before end: Int, in bytes: UnsafeRawBufferPointer) -> Int? {
        let window = Array(bytes[max(0, end - 64)..<min(end, bytes.count)])
        guard let text = String(bytes: window, encoding: .isoLatin1),
            let match = text.matches(of: #/startxref\s+(\d{1,15})\s/#).last,
            let offset = Int(match.1), offset < end
        else { return nil }
        return offset
    }

    /// The classic section at `offset`: its entries and trailer; nil when it is not one that
    /// parses strictly.
    private static func section(at offset: Int, in bytes: UnsafeRawBufferPointer) -> Section? {
        var cursor = offset
        func skipWhitespace() { while cursor < bytes.count, PDFBytes.isWhitespace(bytes[cursor]) { cursor += 1 } }
        func starts(_ word: String) -> Bool {
            let utf8 = Array(word.utf8)
            return cursor + utf8.count <= bytes.count && Array(bytes[cursor..<(cursor + utf8.count)]) == utf8
        }
        func number() -> Int? {
            var value = 0
            let first = cursor
            while cursor < bytes.count, (0x30...0x39).contains(bytes[cursor]), cursor - first < 10 {
                value = value * 10 + Int(bytes[cursor] - 0x30)
                cursor += 1
            }
            return cursor > first ? value : nil
        }
        skipWhitespace()
        guard starts("xref") else { return nil }
        cursor += 4
        var section = Section()
        while true {
            skipWhitespace()
            if starts("trailer") { break }
            guard let first = number(), cursor < bytes.count, bytes[cursor] == 0x20 else { return nil }
            cursor += 1
            guard let count = number(), count <= 1_000_000 else { return nil }
            skipWhitespace()
            guard cursor + count * 20 <= bytes.count else { return nil }
            for index in 0..<count {
                guard let entry = entry(Array(bytes[cursor..<(cursor + 20)])) else { return nil }
                section.entries.append((first + index, entry))
                cursor += 20
            }
        }
        cursor += 7
        let rest = Array(bytes[cursor..<min(bytes.count, cursor + 65536)])
        guard let end = PDFBytes.firstIndex(of: Array("startxref".utf8), in: rest),
            let text = String(bytes: rest[..<end], encoding: .isoLatin1), text.contains("<<"),
            !text.contains("/XRefStm"), !text.contains("/Encrypt")
        else { return nil }
        section.previous = text.firstMatch(of: #/\/Prev\s+(\d{1,15})/#).flatMap { Int64($0.1) }
        let blanked = text.replacing(#/\/Prev\s+\d+/#) { String(repeating: " ", count: $0.output.count) }
        // Back to the same bytes (ISO Latin-1 maps each byte to the scalar of its value).
        section.trailer = blanked.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
        return section
    }

    /// One 20-byte entry: `oooooooooo ggggg n` and a two-byte end of line.
    private static func entry(_ row: [UInt8]) -> Entry? {
        let digits = row[0..<10] + row[11..<16]
        guard digits.allSatisfy({ (0x30...0x39).contains($0) }), row[10] == 0x20, row[16] == 0x20,
            row[17] == 0x6E || row[17] == 0x66,
            [[0x20, 0x0D], [0x20, 0x0A], [0x0D, 0x0A]].contains(Array(row[18..<20]))
        else { return nil }
        let offset = row[0..<10].reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
        let generation = row[11..<16].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return Entry(offset: offset, generation: generation, inUse: row[17] == 0x6E)
    }
}
