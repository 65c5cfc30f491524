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
            objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents \(5 + 2 * page) 0 R >>")
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
