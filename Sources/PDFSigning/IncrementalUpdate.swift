import Foundation

/// An incremental update (ISO 32000-1 7.5.6): changed and new objects appended uncompressed after
/// the original bytes, then a cross-reference section of the same kind as the file's last one
/// (a classic table, or an uncompressed `/Type /XRef` stream) whose trailer points back with
/// `/Prev`. The original bytes are never touched, so earlier signatures stay valid.
struct IncrementalUpdate {
    /// One object of the update: its number, generation and body (the PDF syntax between
    /// `obj` and `endobj`).
    struct Object {
        let number: Int
        let generation: Int
        let body: [UInt8]
    }

    var objects: [Object] = []

    /// The serialised update and where each object starts in it.
    struct Serialized {
        var bytes: [UInt8]
        /// Offsets in `bytes` of each object's first byte, by object number.
        var objectOffsets: [Int: Int]
    }

    /// Writes the update as it will follow `originalSize` bytes of the file.
    ///
    /// - Parameters:
    ///   - originalSize: the file's size before the update.
    ///   - needsLeadingNewline: whether the file does not end with an end-of-line.
    ///   - previous: the offset of the file's last cross-reference section (`/Prev`).
    ///   - kind: the kind of section to write.
    ///   - size: the file's `/Size` before the update.
    ///   - trailerEntries: `/Root`, `/Info`, `/ID` as PDF syntax (`/Root 1 0 R …`).
    func serialize(
        originalSize: Int64,
        needsLeadingNewline: Bool,
        previous: Int64,
        kind: PDFFile.XrefKind,
        size: Int,
        trailerEntries: String
    ) -> Serialized {
        var out: [UInt8] = needsLeadingNewline ? [0x0A] : []
        var offsets: [Int: Int] = [:]
        var entries: [(number: Int, generation: Int, offset: Int64)] = []
        for object in objects {
            offsets[object.number] = out.count
            entries.append((object.number, object.generation, originalSize + Int64(out.count)))
            out += Array("\(object.number) \(object.generation) obj\n".utf8)
            out += object.body
            out += Array("\nendobj\n".utf8)
        }
        let xrefOffset = originalSize + Int64(out.count)
        var newSize = max(size, (objects.map(\.number).max() ?? 0) + 1)
        switch kind {
        case .table:
            out += Array("xref\n".utf8)
            for group in Self.groups(entries.sorted { $0.number < $1.number }) {
                out += Array("\(group.first!.number) \(group.count)\n".utf8)
                for entry in group {
                    out += Array(String(format: "%010lld %05d n\r\n", entry.offset, entry.generation).utf8)
                }
            }
            out += Array("trailer\n<< /Size \(newSize) \(trailerEntries) /Prev \(previous) >>\n".utf8)
        case .stream:
            let streamNumber = newSize
            newSize += 1
            entries.append((streamNumber, 0, xrefOffset))
            let sorted = entries.sorted { $0.number < $1.number }
            let offsetWidth = max(4, (64 - xrefOffset.leadingZeroBitCount + 7) / 8)
            var data: [UInt8] = []
            var index: [String] = []
            for group in Self.groups(sorted) {
                index.append("\(group.first!.number) \(group.count)")
                for entry in group {
                    data.append(1)
                    for shift in stride(from: (offsetWidth - 1) * 8, through: 0, by: -8) {
                        data.append(UInt8(truncatingIfNeeded: entry.offset >> Int64(shift)))
                    }
                    data.append(UInt8(truncatingIfNeeded: entry.generation >> 8))
                    data.append(UInt8(truncatingIfNeeded: entry.generation))
                }
            }
            out += Array(
                ("\(streamNumber) 0 obj\n<< /Type /XRef /Size \(newSize) /W [1 \(offsetWidth) 2] /Index "
                    + "[\(index.joined(separator: " "))] \(trailerEntries) /Prev \(previous) /Length \(data.count) "
                    + ">>\nstream\n").utf8
            )
            out += data
            out += Array("\nendstream\nendobj\n".utf8)
        }
        out += Array("startxref\n\(xrefOffset)\n%%EOF\n".utf8)
        return Serialized(bytes: out, objectOffsets: offsets)
    }

    /// Writes the update as it will follow the whole of `file`: after its last byte (a newline
    /// first when it does not end with one), with a cross-reference section of the kind of its last
    /// one, pointing back to it, and `document`'s trailer entries.
    /// - Throws: `.malformedInput` when the file's last cross-reference section cannot be found;
    ///   `.fileSystem`.
    func serialize(after file: borrowing PDFFile, document: QPDFDocument, size: Int) throws -> Serialized {
        let last = try file.lastCrossReference()
        let lastByte = try file.read(at: file.size - 1, count: 1).first
        return serialize(
            originalSize: file.size,
            needsLeadingNewline: lastByte != 0x0A && lastByte != 0x0D,
            previous: last.offset,
            kind: last.kind,
            size: size,
            trailerEntries: SigningPlan.trailerEntries(document)
        )
    }

    /// Consecutive object numbers, grouped into subsections.
    private typealias Entry = (number: Int, generation: Int, offset: Int64)

    private static func groups(_ entries: [Entry]) -> [[Entry]] {
        var groups: [[Entry]] = []
        for entry in entries {
            if let last = groups.last?.last, last.number + 1 == entry.number {
                groups[groups.count - 1].append(entry)
            } else {
                groups.append([entry])
            }
        }
        return groups
    }
}
