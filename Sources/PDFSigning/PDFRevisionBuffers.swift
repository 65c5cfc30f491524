import CertificateProviders
import Foundation

/// The revisions of a PDF, each made into one self-contained buffer for qpdf: the file's bytes up
/// to the revision's end, then one cross-reference section that merges every section up to that
/// revision, with the revision's trailer and no `/Prev`. qpdf then reads one section per revision
/// instead of the whole chain again for each (which made the change analysis quadratic in the
/// number of revisions); each section of the file is read once, here (``PDFXRefSection``), classic
/// tables, cross-reference streams and hybrid files alike.
///
/// The merged section is a classic table, or a cross-reference stream when an object of the
/// revision lies in an object stream. Two buffers serve the revisions in turn (the analysis holds
/// two revisions at once), each extended by the bytes between its last revision and the next, so
/// the file is copied twice in all, not once per revision.
///
/// Built only when the merge is exactly what qpdf reads from the chain: every section reads
/// cleanly, each `/Prev` names the section before, every entry that uses an object gives it the
/// same generation, an entry's offset lies inside its own revision, and each cross-reference
/// stream is the object its number names until the end (qpdf keeps a stream it read as that
/// object); otherwise nil, and the analysis opens each revision as the file has it.
struct PDFRevisionBuffers {
    typealias Entry = PDFXRefSection.Entry

    private let file: PDFMappedFile
    private let ends: [Int64]
    private let sections: [PDFXRefSection]
    /// Each section's entries that decide its objects (the first one of each object, in qpdf's order).
    private let decisive: [[(number: Int, entry: Entry)]]
    private let highest: Int
    private let capacity: Int
    private var merged: [Entry] = []
    private var compressed = 0
    private var mergedUpTo = 0
    private var buffers: [PDFRevisionBuffer] = []
    /// The entries the last revision opened changed, against the one opened before it (every
    /// entry in use when it was the first opened).
    private(set) var latestChanges: [(number: Int, entry: Entry)] = []
    /// The highest object number any section names.
    var highestObjectNumber: Int { highest }

    /// The most bytes all the merged sections may take together.
    static let defaultBudget: Int64 = 2 << 30
    /// The highest object number merged (a table of that many entries per revision).
    static let maximumObjectNumber = 8_000_000

    /// Reads every section of `file` (revision `r` ends at `ends[r - 1]`); nil when the merge would
    /// not be what qpdf reads, or the merged sections would exceed `budget` bytes.
    init?(file: PDFMappedFile, ends: [Int64], budget: Int64 = defaultBudget) {
        guard !ends.isEmpty else { return nil }
        let bytes = UnsafeRawBufferPointer(start: file.base, count: file.count)
        var sections: [PDFXRefSection] = []
        var offsets: [Int64] = []
        for end in ends {
            // qpdf sees the revision's bytes only.
            let revision = UnsafeRawBufferPointer(rebasing: bytes[0..<min(Int(end), bytes.count)])
            guard let offset = Self.startxref(before: revision.count, in: revision),
                let section = PDFXRefSection.read(at: offset, in: revision),
                section.previous == offsets.last, section.trailer.suffix(2).elementsEqual(">>".utf8)
            else { return nil }
            sections.append(section)
            offsets.append(Int64(offset))
        }
        let numbers = sections.flatMap { $0.entries.map(\.number) + $0.streams.map(\.number) }
        guard let highest = numbers.max(), highest < Self.maximumObjectNumber else { return nil }
        let decisive = sections.map(Self.decisive)
        guard Self.mergesExactly(sections, decisive, ends: ends, highest: highest) else { return nil }
        let table = (highest + 1) * 20 + (sections.map(\.trailer.count).max() ?? 0) + 256
        guard Int64(ends.count) * Int64(table) <= budget else { return nil }
        self.file = file
        self.ends = ends
        self.sections = sections
        self.decisive = decisive
        self.highest = highest
        capacity = file.count + table
    }

    /// The first entry of each object in the section: the one qpdf keeps.
    private static func decisive(_ section: PDFXRefSection) -> [(number: Int, entry: Entry)] {
        var seen = Set<Int>()
        return section.entries.filter { seen.insert($0.number).inserted }
    }

    /// Whether merging section after section (each newer one's deciding entries replacing the
    /// older ones) gives what qpdf reads from the chain, for every revision.
    private static func mergesExactly(
        _ sections: [PDFXRefSection],
        _ decisive: [[(number: Int, entry: Entry)]],
        ends: [Int64],
        highest: Int
    ) -> Bool {
        var merged = [Entry](repeating: .free, count: highest + 1)
        var generations = [Int32](repeating: -1, count: highest + 1)
        var streamObjects = Set<Int>()
        for (index, section) in sections.enumerated() {
            // qpdf keys objects by number and generation: two generations of one number both stay.
            for (number, entry) in section.entries {
                guard let generation = entry.generation else { continue }
                if case .offset(let offset, _) = entry, offset >= ends[index] { return false }
                guard generation <= 65535, generations[number] == -1 || generations[number] == Int32(generation)
                else { return false }
                generations[number] = Int32(generation)
            }
            for (number, entry) in decisive[index] {
                // A freed stream object stays the stream qpdf read: not what the merge says.
                if entry == .free, streamObjects.contains(number) { return false }
                merged[number] = entry
            }
            for stream in section.streams {
                guard case .offset(let offset, let generation) = merged[stream.number],
                    generation == stream.generation, stream.offsets.contains(offset)
                else { return false }
                streamObjects.insert(stream.number)
            }
        }
        return true
    }

    /// Revision `revision` (1-based) opened by qpdf from its buffer (strictly: no recovery).
    /// Revisions asked for in increasing order merge each section once.
    /// - Throws: as ``QPDFDocument/init(buffer:length:description:strict:)``.
    mutating func document(revision: Int, description: String) throws -> QPDFDocument {
        if merged.isEmpty || mergedUpTo > revision {
            merged = [Entry](repeating: .free, count: highest + 1)
            compressed = 0
            mergedUpTo = 0
        }
        latestChanges = []
        while mergedUpTo < revision {
            for (number, entry) in decisive[mergedUpTo] where merged[number] != entry {
                if case .compressed = merged[number] { compressed -= 1 }
                if case .compressed = entry { compressed += 1 }
                merged[number] = entry
                latestChanges.append((number, entry))
            }
            mergedUpTo += 1
        }
        let end = Int(ends[revision - 1])
        let buffer = freeBuffer()
        buffer.holdFile(file, upTo: end)
        var writer = PDFRevisionBuffer.Writer(buffer: buffer, position: end)
        if compressed > 0 {
            writeStream(&writer, trailer: sections[revision - 1].trailer)
        } else {
            writeTable(&writer, trailer: sections[revision - 1].trailer)
        }
        writer.append("\nstartxref\n\(end + 1)\n%%EOF\n")
        return try QPDFDocument(buffer: buffer, length: writer.position, description: description, strict: true)
    }

    /// A buffer no open document reads (a new one when both are in use).
    private mutating func freeBuffer() -> PDFRevisionBuffer {
        for index in buffers.indices where isKnownUniquelyReferenced(&buffers[index]) { return buffers[index] }
        let buffer = PDFRevisionBuffer(capacity: capacity)
        buffers.append(buffer)
        return buffer
    }

    private static let firstFreeRow = Array("0000000000 65535 f\r\n".utf8)
    private static let freeRow = Array("0000000000 00000 f\r\n".utf8)
    private static let inUseEnd = Array(" n\r\n".utf8)

    /// A classic table of every object and the trailer.
    private func writeTable(_ writer: inout PDFRevisionBuffer.Writer, trailer: [UInt8]) {
        writer.append("\nxref\n0 \(highest + 1)\n")
        for (number, entry) in merged.enumerated() {
            switch entry {
            case .offset(let offset, let generation):
                writer.digits(offset, 10)
                writer.append(CollectionOfOne(0x20))
                writer.digits(Int64(generation), 5)
                writer.append(Self.inUseEnd)
            case .free, .compressed:
                writer.append(number == 0 ? Self.firstFreeRow : Self.freeRow)
            }
        }
        writer.append("trailer\n")
        writer.append(trailer)
    }

    /// A cross-reference stream of every object (uncompressed), with the trailer's entries, as
    /// object `highest + 1` (listed in no table, as the file's own object of that number, if any, is
    /// in none either).
    private func writeStream(_ writer: inout PDFRevisionBuffer.Writer, trailer: [UInt8]) {
        let count = highest + 1
        writer.append("\n\(count) 0 obj\n")
        writer.append(trailer.dropLast(2))
        writer.append("/Type /XRef /W [1 8 4] /Index [0 \(count)] /Length \(count * 13) >>\nstream\n")
        for entry in merged {
            switch entry {
            case .free: writer.fields(0, 0, 0)
            case .offset(let offset, let generation): writer.fields(1, offset, Int64(generation))
            case .compressed(let stream, let index): writer.fields(2, stream, index)
            }
        }
        writer.append("\nendstream\nendobj")
    }

    /// The offset the last `startxref` of the last 64 bytes of `bytes` names (followed by an end
    /// of line), when it lies inside them.
    static func startxref(before end: Int, in bytes: UnsafeRawBufferPointer) -> Int? {
        let marker = Array("startxref".utf8)
        var start = end - marker.count
        while start >= max(0, end - 64) {
            defer { start -= 1 }
            guard bytes[start] == marker[0], marker.indices.allSatisfy({ bytes[start + $0] == marker[$0] }) else {
                continue
            }
            var reader = PDFXRefReader(bytes: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), cursor: start + 9)
            let digitsStart = reader.cursor + reader.skipWhitespace()
            guard digitsStart > start + 9, let offset = reader.number(), reader.cursor - digitsStart <= 15,
                reader.cursor < end, PDFBytes.isWhitespace(bytes[reader.cursor]), offset < end
            else { continue }
            return offset
        }
        return nil
    }
}

/// One buffer a revision is handed to qpdf in: the file's first bytes and a merged section after
/// them. The documents reading it keep it alive; it is written again only when none does.
final class PDFRevisionBuffer {
    let storage: UnsafeMutableRawBufferPointer
    /// How many of the file's first bytes it holds.
    private var filePrefix = 0

    init(capacity: Int) {
        storage = .allocate(byteCount: max(capacity, 1), alignment: 1)
    }

    deinit { storage.deallocate() }

    /// Makes its first `end` bytes those of `file`, copying only what it does not hold yet.
    func holdFile(_ file: PDFMappedFile, upTo end: Int) {
        if end > filePrefix, let base = storage.baseAddress {
            (base + filePrefix).copyMemory(from: file.base + filePrefix, byteCount: end - filePrefix)
        }
        filePrefix = end
    }

    /// Writes bytes from a position on (the buffer is large enough for any merged section).
    struct Writer {
        let buffer: PDFRevisionBuffer
        var position: Int

        mutating func append(_ text: String) { append(Array(text.utf8)) }

        mutating func append(_ bytes: some Collection<UInt8>) {
            let count = bytes.count
            UnsafeMutableRawBufferPointer(rebasing: buffer.storage[position..<(position + count)]).copyBytes(
                from: bytes
            )
            position += count
        }

        /// `value` in decimal, zero-padded to `count` digits.
        mutating func digits(_ value: Int64, _ count: Int) {
            var rest = value
            for index in stride(from: position + count - 1, through: position, by: -1) {
                buffer.storage[index] = 0x30 + UInt8(rest % 10)
                rest /= 10
            }
            position += count
        }

        /// One cross-reference stream entry of widths 1, 8 and 4, big-endian.
        mutating func fields(_ type: UInt8, _ first: Int64, _ second: Int64) {
            buffer.storage[position] = type
            for shift in 0..<8 {
                buffer.storage[position + 1 + shift] = UInt8(truncatingIfNeeded: first >> (56 - 8 * shift))
            }
            for shift in 0..<4 {
                buffer.storage[position + 9 + shift] = UInt8(truncatingIfNeeded: second >> (24 - 8 * shift))
            }
            position += 13
        }
    }
}
