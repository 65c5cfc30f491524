import Foundation
import Testing

/// Poppler's view of a PDF page: `pdftoppm` pixels, `pdftotext` text, `pdffonts` and `pdfimages`
/// listings, for tests of what a signed PDF shows.
public enum PDFRender {
    /// One rendered page: RGB pixels, row after row, top row first.
    public struct Page: Sendable {
        /// Width in pixels.
        public let width: Int
        /// Height in pixels.
        public let height: Int
        /// Three bytes a pixel.
        public let pixels: [UInt8]

        /// The pixel at column `x`, row `y` (from the top).
        public func pixel(_ x: Int, _ y: Int) -> [UInt8] {
            let start = (y * width + x) * 3
            return Array(pixels[start..<start + 3])
        }

        /// The pixels at which this page and `other` differ, as (column, row) pairs.
        public func differences(from other: Page) -> [(x: Int, y: Int)] {
            precondition(width == other.width && height == other.height, "pages of different sizes")
            var found: [(x: Int, y: Int)] = []
            for y in 0..<height {
                for x in 0..<width where pixel(x, y) != other.pixel(x, y) { found.append((x, y)) }
            }
            return found
        }
    }

    /// Renders page `number` (from 1) of the PDF at `path` at 72 dpi, so a pixel is a PDF point.
    public static func page(_ path: String, _ number: Int = 1) throws -> Page {
        let result = try ExternalTool.run(
            "pdftoppm",
            ["-r", "72", "-f", "\(number)", "-l", "\(number)", path]
        ).requireSuccess()
        let bytes = Array(result.standardOutput)
        // P6 header: magic, width, height, maximum value, each followed by white space.
        var fields: [String] = []
        var index = 0
        while fields.count < 4, index < bytes.count {
            var field = ""
            while index < bytes.count, !(bytes[index] == 0x20 || bytes[index] == 0x0A) {
                field.append(Character(UnicodeScalar(bytes[index])))
                index += 1
            }
            index += 1
            if !field.isEmpty { fields.append(field) }
        }
        let width = try #require(fields.count == 4 ? Int(fields[1]) : nil)
        let height = try #require(Int(fields[2]))
        try #require(fields[0] == "P6" && bytes.count - index == width * height * 3, "pdftoppm: \(fields)")
        return Page(width: width, height: height, pixels: Array(bytes[index...]))
    }

    /// `pdftotext` of page `number` (from 1).
    public static func text(_ path: String, page number: Int = 1) throws -> String {
        try ExternalTool.run(
            "pdftotext",
            ["-f", "\(number)", "-l", "\(number)", "-enc", "UTF-8", path, "-"]
        ).requireSuccess().output
    }

    /// `pdffonts` rows (after its two header lines).
    public static func fonts(_ path: String) throws -> [String] {
        let output = try ExternalTool.run("pdffonts", [path]).requireSuccess().output
        return output.split(separator: "\n").dropFirst(2).map(String.init)
    }

    /// `pdfimages -list` rows (after its two header lines).
    public static func images(_ path: String) throws -> [String] {
        let output = try ExternalTool.run("pdfimages", ["-list", path]).requireSuccess().output
        return output.split(separator: "\n").dropFirst(2).map(String.init)
    }
}
