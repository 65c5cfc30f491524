import Foundation

/// Long chains of incremental updates appended to a PDF, for the change analysis over many
/// revisions (its tests and the `pdf-revisions` bench): each update redefines one object as the
/// trailer's `/Info` (`<< /Title (Revision N) >>`, an LTV-class change) and may redefine others,
/// in a classic cross-reference section or a cross-reference stream.
public enum PDFUpdateChain {
    /// How each update writes its cross-reference section.
    public enum Sections: Sendable {
        /// A classic table.
        case tables
        /// An uncompressed cross-reference stream that lists itself (as object `/Size + 1`).
        case streams
    }

    /// What the file's last trailer says.
    public struct Trailer: Sendable {
        /// `/Root` as `n g`.
        public var root: String
        /// `/Size`.
        public var size: Int
        /// The offset `startxref` names.
        public var startxref: Int
    }

    /// Reads the last trailer (a table's or a stream's dictionary) from the file's last 4 KiB.
    public static func trailer(of pdf: [UInt8]) -> Trailer? {
        let text = String(decoding: pdf.suffix(4096), as: UTF8.self)
        guard let root = text.matches(of: #/\/Root\s+(\d+)\s+(\d+)\s+R/#).last,
            let size = text.matches(of: #/\/Size\s+(\d+)/#).last.flatMap({ Int($0.1) }),
            let last = text.matches(of: #/startxref\s+(\d+)/#).last.flatMap({ Int($0.1) })
        else { return nil }
        return Trailer(root: "\(root.1) \(root.2)", size: size, startxref: last)
    }

    /// `pdf` with `count` updates appended. Update `index` (from 0) writes object `/Size` as the
    /// `/Info` dictionary and, when `others` gives some for it, those objects (number and body).
    /// - Returns: nil when the last trailer cannot be read.
    public static func appending(
        to pdf: [UInt8],
        count: Int,
        sections: Sections,
        others: (Int) -> [(number: Int, body: String)] = { _ in [] }
    ) -> [UInt8]? {
        guard let trailer = trailer(of: pdf) else { return nil }
        let info = trailer.size
        var out = pdf
        if out.last != 0x0A { out.append(0x0A) }
        var previous = trailer.startxref
        for index in 0..<count {
            var written: [(number: Int, offset: Int)] = []
            for (number, body) in [(info, "<< /Title (Revision \(index)) >>")] + others(index) {
                written.append((number, out.count))
                out += Array("\(number) 0 obj\n\(body)\nendobj\n".utf8)
            }
            let start = out.count
            let references = "/Root \(trailer.root) R /Info \(info) 0 R /Prev \(previous)"
            switch sections {
            case .tables:
                out += Array("xref\n0 1\n0000000000 65535 f\r\n".utf8)
                for (number, offset) in written {
                    let entry = String(repeating: "0", count: 10 - String(offset).count) + String(offset)
                    out += Array("\(number) 1\n\(entry) 00000 n\r\n".utf8)
                }
                out += Array("trailer\n<< /Size \(info + 1) \(references) >>\nstartxref\n\(start)\n%%EOF\n".utf8)
            case .streams:
                written.append((info + 1, start))
                var data: [UInt8] = []
                for (_, offset) in written {
                    data += [1] + (0..<4).map { UInt8(truncatingIfNeeded: offset >> (24 - 8 * $0)) } + [0, 0]
                }
                let index = written.map { "\($0.number) 1" }.joined(separator: " ")
                out += Array(
                    ("\(info + 1) 0 obj\n<< /Type /XRef /Size \(info + 2) /W [1 4 2] /Index [\(index)] \(references) "
                        + "/Length \(data.count) >>\nstream\n").utf8
                )
                out += data + Array("\nendstream\nendobj\nstartxref\n\(start)\n%%EOF\n".utf8)
            }
            previous = start
        }
        return out
    }
}
