import Foundation

/// One section of a PDF's cross-reference chain, read as qpdf reads it without recovery: a classic
/// table (and, in a hybrid file, the stream its trailer's `/XRefStm` names) or a cross-reference
/// stream. Only a section qpdf reads without an error or a warning is read; anything else gives
/// nil, and the change analysis then opens that revision as the file has it.
///
/// A stream's data is decoded by qpdf itself (as the one object of a small PDF of its own), so the
/// section holds what qpdf reads from it.
struct PDFXRefSection {
    /// One entry of the section.
    enum Entry: Equatable {
        case free
        /// An object at an offset of the file, with its generation.
        case offset(Int64, generation: Int)
        /// An object stored in an object stream (generation 0).
        case compressed(stream: Int64, index: Int64)

        /// The generation of an object in use; nil for a free entry.
        var generation: Int? {
            switch self {
            case .free: return nil
            case .offset(_, let generation): return generation
            case .compressed: return 0
            }
        }
    }

    /// A cross-reference stream the section was read from: qpdf keeps it as object
    /// `number generation` unless the table already names that object.
    struct Stream {
        var number: Int
        var generation: Int
        /// Where its `N G obj` starts, and the offset the chain names (whitespace may lie between).
        var offsets: ClosedRange<Int64>
    }

    /// The entries in the order qpdf takes them: a table's entries in use, then its
    /// `/XRefStm` stream's entries, then the table's free entries (a stream's in its own order).
    var entries: [(number: Int, entry: Entry)] = []
    var streams: [Stream] = []
    /// The trailer as a merged section repeats it: `/Size`, `/Root` and `/Info` (what qpdf and the
    /// change analysis read of a trailer), as PDF syntax.
    var trailer: [UInt8] = []
    /// The offset of the section before it (`/Prev`).
    var previous: Int64?

    /// Reads the section at `offset` of `bytes`; nil when it is not one qpdf reads cleanly, or it
    /// names an encrypted document.
    static func read(at offset: Int, in bytes: UnsafeRawBufferPointer) -> PDFXRefSection? {
        guard offset >= 0, offset < bytes.count else { return nil }
        var reader = PDFXRefReader(bytes: bytes, cursor: offset)
        // qpdf warns about whitespace before a table's `xref` (not before a stream's object).
        if reader.starts("xref"), offset + 4 < bytes.count, PDFBytes.isWhitespace(bytes[offset + 4]) {
            return table(&reader)
        }
        var section = PDFXRefSection()
        guard let dictionary = section.readStream(at: offset, in: bytes), section.finish(trailer: dictionary)
        else { return nil }
        return section
    }

    /// A classic table from the reader's cursor (at `xref`) to its trailer.
    private static func table(_ reader: inout PDFXRefReader) -> PDFXRefSection? {
        reader.cursor += 4
        var inUse: [(number: Int, entry: Entry)] = []
        var free: [(number: Int, entry: Entry)] = []
        while true {
            reader.skipWhitespace()
            if reader.starts("trailer") { break }
            guard let first = reader.number(), reader.cursor < reader.bytes.count, reader.bytes[reader.cursor] == 0x20
            else { return nil }
            reader.cursor += 1
            guard let count = reader.number(), count <= 1_000_000 else { return nil }
            reader.skipWhitespace()
            guard reader.cursor + count * 20 <= reader.bytes.count else { return nil }
            for index in 0..<count {
                guard let entry = reader.tableEntry() else { return nil }
                if entry == .free { free.append((first + index, entry)) } else { inUse.append((first + index, entry)) }
            }
        }
        reader.cursor += 7
        guard let end = reader.find("startxref", within: 65536),
            let dictionary = PDFDictionaryText(ArraySlice(reader.bytes[reader.cursor..<end]))
        else { return nil }
        var section = PDFXRefSection(entries: inUse)
        if dictionary.entries["/XRefStm"] != nil {
            guard let offset = dictionary.integer("/XRefStm"), offset >= 0, offset < reader.bytes.count,
                section.readStream(at: Int(offset), in: reader.bytes) != nil
            else { return nil }
        }
        section.entries += free
        guard section.finish(trailer: dictionary) else { return nil }
        return section
    }

    /// Checks what qpdf requires of every trailer (a direct integer `/Size`, `/Prev` when present;
    /// no `/Encrypt`) and what a merged section can repeat (`/Root` and `/Info` references),
    /// keeps `/Prev` and writes the merged section's trailer.
    private mutating func finish(trailer dictionary: PDFDictionaryText) -> Bool {
        guard dictionary.entries["/Encrypt"] == nil, let size = dictionary.integer("/Size"),
            let root = dictionary.reference("/Root")
        else { return false }
        if dictionary.entries["/Prev"] != nil {
            guard let value = dictionary.integer("/Prev") else { return false }
            previous = value
        }
        var text = "<< /Size \(size) /Root \(root.number) \(root.generation) R"
        if dictionary.entries["/Info"] != nil {
            guard let info = dictionary.reference("/Info") else { return false }
            text += " /Info \(info.number) \(info.generation) R"
        }
        trailer = Array((text + " >>").utf8)
        return true
    }

    /// Reads the cross-reference stream object at `offset` and appends its entries; its
    /// dictionary, or nil when it is not a stream qpdf reads cleanly.
    private mutating func readStream(at offset: Int, in bytes: UnsafeRawBufferPointer) -> PDFDictionaryText? {
        var reader = PDFXRefReader(bytes: bytes, cursor: offset)
        reader.skipWhitespace()
        let header = reader.cursor
        guard let number = reader.number(), reader.skipWhitespace() > 0, let generation = reader.number(),
            reader.skipWhitespace() > 0, reader.starts("obj")
        else { return nil }
        reader.cursor += 3
        let dictionaryStart = reader.cursor
        guard let keyword = reader.find("stream", within: 65536),
            let dictionary = PDFDictionaryText(ArraySlice(bytes[dictionaryStart..<keyword])),
            dictionary.entries["/Type"].map({ $0.elementsEqual("/XRef".utf8) }) == true,
            let length = dictionary.integer("/Length").map(Int.init), length >= 0
        else { return nil }
        // qpdf warns unless `stream` ends its line with CR LF or LF, and wants `endstream` and
        // `endobj` after the data (and one more byte of the file).
        reader.cursor = keyword + 6
        if reader.starts("\r\n") {
            reader.cursor += 2
        } else if reader.starts("\n") {
            reader.cursor += 1
        } else {
            return nil
        }
        let dataStart = reader.cursor
        guard bytes.count - dataStart >= length else { return nil }
        reader.cursor += length
        reader.skipWhitespace()
        guard reader.starts("endstream") else { return nil }
        reader.cursor += 9
        reader.skipWhitespace()
        guard reader.starts("endobj"), reader.cursor + 6 < bytes.count,
            let data = Self.decode(Array(bytes[dataStart..<(dataStart + length)]), dictionary),
            appendStreamEntries(data, dictionary)
        else { return nil }
        streams.append(Stream(number: number, generation: generation, offsets: Int64(offset)...Int64(header)))
        return dictionary
    }

    /// A stream's stored `data` decoded by its `/Filter` and `/DecodeParms` (direct values only),
    /// by qpdf itself: the stream is the one object of a small PDF of its own, so it is decoded
    /// exactly as qpdf decodes it in the file. nil when qpdf cannot decode it without a warning.
    private static func decode(_ data: [UInt8], _ dictionary: PDFDictionaryText) -> [UInt8]? {
        guard let filter = dictionary.entries["/Filter"] else { return data }
        let parameters = dictionary.entries["/DecodeParms"]
        // A reference would name an object of the file, which the small PDF does not have.
        let tokens = ([filter] + (parameters.map { [$0] } ?? [])).flatMap {
            $0.split { PDFBytes.isWhitespace($0) || Array("[]<>/".utf8).contains($0) }
        }
        guard !tokens.contains(where: { $0.elementsEqual("R".utf8) }) else { return nil }
        var bytes = Array("%PDF-1.7\n1 0 obj\n<< /Length \(data.count) /Filter ".utf8) + filter
        if let parameters { bytes += Array(" /DecodeParms ".utf8) + parameters }
        bytes += Array(" >>\nstream\n".utf8) + data + Array("\nendstream\nendobj\n".utf8)
        let table = bytes.count
        bytes += Array(
            ("xref\n0 2\n0000000000 65535 f\r\n0000000009 00000 n\r\ntrailer\n<< /Size 2 >>\n"
                + "startxref\n\(table)\n%%EOF\n").utf8
        )
        let buffer = PDFRevisionBuffer(capacity: bytes.count)
        var writer = PDFRevisionBuffer.Writer(buffer: buffer, position: 0)
        writer.append(bytes)
        guard
            let document = try? QPDFDocument(
                buffer: buffer,
                length: bytes.count,
                description: "a cross-reference stream",
                strict: true
            ),
            let stream = document.object(number: 1, generation: 0), document.isStream(stream),
            document.takeWarnings().isEmpty
        else { return nil }
        return document.specializedStreamData(stream)
    }

    /// Appends the entries of a decoded cross-reference stream, as qpdf reads them (`/W`, `/Index`
    /// or `[0 /Size]`, a first field of width 0 meaning type 1); false when qpdf would refuse it or
    /// warn (data of another size than the entries take).
    private mutating func appendStreamEntries(_ data: [UInt8], _ dictionary: PDFDictionaryText) -> Bool {
        guard let widths = dictionary.integers("/W"), widths.count == 3, widths.allSatisfy({ (0...8).contains($0) }),
            widths.reduce(0, +) > 0
        else { return false }
        var index: [Int64] = []
        if dictionary.entries["/Index"] != nil {
            guard let numbers = dictionary.integers("/Index"), numbers.count >= 2, numbers.count.isMultiple(of: 2)
            else { return false }
            index = numbers
        } else {
            guard let size = dictionary.integer("/Size") else { return false }
            index = [0, size]
        }
        let width = Int(widths.reduce(0, +))
        var total: Int64 = 0
        for pair in stride(from: 0, to: index.count, by: 2) {
            guard index[pair] >= 0, index[pair + 1] >= 0, index[pair] + index[pair + 1] <= Int64(Int32.max) else {
                return false
            }
            total += index[pair + 1]
        }
        guard total * Int64(width) == Int64(data.count) else { return false }
        var position = 0
        for pair in stride(from: 0, to: index.count, by: 2) {
            for number in index[pair]..<(index[pair] + index[pair + 1]) {
                var fields: [Int64] = [widths[0] == 0 ? 1 : 0, 0, 0]
                for field in 0..<3 {
                    for _ in 0..<widths[field] {
                        fields[field] = fields[field] << 8 | Int64(data[position])
                        position += 1
                    }
                }
                switch fields[0] {
                case 0: entries.append((Int(number), .free))
                case 1:
                    guard fields[2] <= Int64(Int32.max) else { return false }
                    entries.append((Int(number), .offset(fields[1], generation: Int(fields[2]))))
                case 2: entries.append((Int(number), .compressed(stream: fields[1], index: fields[2])))
                default: return false
                }
            }
        }
        return true
    }
}

/// A cursor over a file's bytes, for the cross-reference syntax.
struct PDFXRefReader {
    let bytes: UnsafeRawBufferPointer
    var cursor: Int

    /// Skips whitespace; how many bytes it skipped.
    @discardableResult
    mutating func skipWhitespace() -> Int {
        let start = cursor
        while cursor < bytes.count, PDFBytes.isWhitespace(bytes[cursor]) { cursor += 1 }
        return cursor - start
    }

    /// Whether `word` stands at the cursor.
    func starts(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard cursor + count <= bytes.count else { return false }
        return memcmp(bytes.baseAddress! + cursor, word.utf8Start, count) == 0
    }

    /// A decimal number of at most ten digits at the cursor.
    mutating func number() -> Int? {
        var value = 0
        let first = cursor
        while cursor < bytes.count, (0x30...0x39).contains(bytes[cursor]), cursor - first < 10 {
            value = value * 10 + Int(bytes[cursor] - 0x30)
            cursor += 1
        }
        return cursor > first ? value : nil
    }

    /// Where `word` first occurs from the cursor, looking at most `window` bytes ahead.
    func find(_ word: StaticString, within window: Int) -> Int? {
        let count = word.utf8CodeUnitCount
        let end = min(bytes.count, cursor + window)
        guard let base = bytes.baseAddress else { return nil }
        var index = cursor
        while end - index >= count,
            let hit = memchr(base + index, Int32(word.utf8Start.pointee), end - index - count + 1)
        {
            let found = UnsafeRawPointer(hit) - base
            if memcmp(base + found, word.utf8Start, count) == 0 { return found }
            index = found + 1
        }
        return nil
    }

    /// One 20-byte table entry at the cursor (`oooooooooo ggggg n` and a two-byte end of line),
    /// the cursor then after it.
    mutating func tableEntry() -> PDFXRefSection.Entry? {
        guard cursor + 20 <= bytes.count else { return nil }
        let row = UnsafeRawBufferPointer(rebasing: bytes[cursor..<(cursor + 20)])
        func digits(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                guard (0x30...0x39).contains(row[index]) else { return nil }
                value = value * 10 + Int64(row[index] - 0x30)
            }
            return value
        }
        let end = (row[18], row[19])
        guard let offset = digits(0..<10), let generation = digits(11..<16), row[10] == 0x20, row[16] == 0x20,
            row[17] == 0x6E || row[17] == 0x66, end == (0x20, 0x0D) || end == (0x20, 0x0A) || end == (0x0D, 0x0A)
        else { return nil }
        cursor += 20
        return row[17] == 0x6E ? .offset(offset, generation: Int(generation)) : .free
    }
}
