import Foundation

/// Small PDFs for tests of PDF signing.
public enum TestPDF {
    /// A PDF with `pages` pages of Helvetica text, written by hand with exact cross-reference
    /// offsets (a classic table); feed it to `qpdf` for other layouts.
    public static func minimal(pages: Int = 2) -> [UInt8] {
        var objects: [String] = []
        objects.append("<< /Type /Catalog /Pages 2 0 R >>")
        let kids = (0..<pages).map { "\(4 + 2 * $0) 0 R" }.joined(separator: " ")
        objects.append("<< /Type /Pages /Kids [\(kids)] /Count \(pages) >>")
        objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
        for page in 0..<pages {
            objects.append(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> "
                    + "/Contents \(5 + 2 * page) 0 R >>"
            )
            let text = "BT /F1 24 Tf 72 720 Td (Page \(page + 1) of a test contract) Tj ET"
            objects.append("<< /Length \(text.utf8.count) >>\nstream\n\(text)\nendstream")
        }
        var out = "%PDF-1.7\n%\u{e2}\u{e3}\u{cf}\u{d3}\n"
        var bytes = Array(out.utf8)
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(bytes.count)
            bytes += Array("\(index + 1) 0 obj\n\(object)\nendobj\n".utf8)
        }
        let xref = bytes.count
        out = "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { out += String(format: "%010d 00000 n \n", offset) }
        out += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return bytes + Array(out.utf8)
    }

}

extension TestPDF {
    /// Writes a one-page PDF carrying `mebibytes` MiB of pseudo-random bytes in an unfiltered stream
    /// (referenced from the catalog as `/CertSignPayload`), streaming to disk: memory stays flat.
    /// - Throws: when the file cannot be written.
    public static func writeLarge(to url: URL, mebibytes: Int) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
            let handle = FileHandle(forWritingAtPath: url.path)
        else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        defer { try? handle.close() }
        var offset = 0
        var offsets: [Int] = []
        func write(_ bytes: [UInt8]) throws {
            try handle.write(contentsOf: bytes)
            offset += bytes.count
        }
        let length = mebibytes << 20
        try write(Array("%PDF-1.7\n%\u{e2}\u{e3}\u{cf}\u{d3}\n".utf8))
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R /CertSignPayload 4 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>",
        ]
        for (index, object) in objects.enumerated() {
            offsets.append(offset)
            try write(Array("\(index + 1) 0 obj\n\(object)\nendobj\n".utf8))
        }
        offsets.append(offset)
        try write(Array("4 0 obj\n<< /Length \(length) >>\nstream\n".utf8))
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in block.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            block[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
        for _ in 0..<mebibytes { try write(block) }
        try write(Array("\nendstream\nendobj\n".utf8))
        let xref = offset
        var tail = "xref\n0 5\n0000000000 65535 f \n"
        for entry in offsets { tail += String(format: "%010d 00000 n \n", entry) }
        tail += "trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        try write(Array(tail.utf8))
    }
}
