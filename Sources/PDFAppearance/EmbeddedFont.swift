internal import CertificateProviders
internal import Foundation

/// The subset of a font an appearance draws with, as PDF objects: a Type0 font with Identity-H
/// encoding over a CIDFontType2 (TrueType outlines, `/FontFile2`) or CIDFontType0 (CFF outlines,
/// `/FontFile3 /OpenType`) descendant whose CIDs are the subset's glyph indices, its widths
/// (`/W`), its descriptor, and a `/ToUnicode` map so text extraction gives the characters back.
struct EmbeddedFont {
    let font: AppearanceFont
    let subset: FontSubset
    /// CID → the characters it was drawn for (the first cluster that used it).
    private(set) var unicode: [UInt32: String] = [:]
    /// CID → advance in thousandths of an em, as `/W` states it.
    private(set) var widths: [UInt32: Int] = [:]

    /// Subsets `font` to the glyphs of `lines`.
    /// - Throws: `.fontUnusable` when the font cannot be subset.
    init(_ font: AppearanceFont, lines: [ShapedText]) throws {
        self.font = font
        let glyphs = Set(lines.flatMap { $0.glyphs.map(\.glyph) })
        subset = try FontSubset(font, glyphs: glyphs)
        for glyph in lines.flatMap(\.glyphs) {
            let cid = cid(of: glyph.glyph)
            if unicode[cid] == nil, !glyph.text.isEmpty { unicode[cid] = glyph.text }
            widths[cid] = thousandths(font.advance(of: glyph.glyph))
        }
    }

    /// The CID a glyph of the original font is drawn with.
    func cid(of glyph: UInt32) -> UInt32 { subset.newGlyphs[glyph] ?? 0 }

    /// Font units as thousandths of an em, rounded.
    func thousandths(_ units: Int) -> Int {
        Int((Double(units) * 1000 / Double(font.unitsPerEm)).rounded())
    }

    /// The subset's name: a tag of six capitals derived from its glyphs (ISO 32000-1 9.6.4), `+`,
    /// and the font's PostScript name.
    var baseFont: String {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for (key, value) in subset.newGlyphs.sorted(by: { $0.key < $1.key }) {
            hash = (hash ^ UInt64(key) ^ (UInt64(value) << 32)) &* 1_099_511_628_211
        }
        let tag = (0..<6).map { index in
            Character(UnicodeScalar(UInt8(65 + (hash >> (UInt64(index) * 5)) % 26)))
        }
        return String(tag) + "+" + font.metrics.postScriptName
    }

    /// The font's objects, numbered from `numbers`; returns the Type0 font's number.
    func objects(_ numbers: inout ObjectNumbers) -> Int {
        let type0 = numbers.take()
        let descendant = numbers.take()
        let descriptor = numbers.take()
        let file = numbers.take()
        let toUnicode = numbers.take()
        let name = PDFSyntax.name(baseFont)
        numbers.add(
            type0,
            "<< /Type /Font /Subtype /Type0 /BaseFont \(name) /Encoding /Identity-H /DescendantFonts "
                + "[\(descendant) 0 R] /ToUnicode \(toUnicode) 0 R >>"
        )
        let cff = font.hasCFFOutlines
        let widthArray = widths.sorted { $0.key < $1.key }.map { "\($0.key) [\($0.value)]" }.joined(separator: " ")
        numbers.add(
            descendant,
            "<< /Type /Font /Subtype \(cff ? "/CIDFontType0" : "/CIDFontType2") /BaseFont \(name) /CIDSystemInfo "
                + "<< /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor \(descriptor) 0 R "
                + "/DW 1000 /W [\(widthArray)]\(cff ? "" : " /CIDToGIDMap /Identity") >>"
        )
        let metrics = font.metrics
        let box = metrics.boundingBox
        let bbox = [box.0, box.1, box.2, box.3].map { String(thousandths($0)) }.joined(separator: " ")
        numbers.add(
            descriptor,
            "<< /Type /FontDescriptor /FontName \(name) /Flags 4 /FontBBox [\(bbox)] /ItalicAngle "
                + "\(PDFSyntax.number(metrics.italicAngle)) /Ascent \(thousandths(metrics.ascender)) /Descent "
                + "\(thousandths(metrics.descender)) /CapHeight \(thousandths(metrics.capHeight)) /StemV 80 "
                + "\(cff ? "/FontFile3" : "/FontFile2") \(file) 0 R >>"
        )
        let fileEntries = cff ? "/Subtype /OpenType" : "/Length1 \(subset.bytes.count)"
        numbers.add(file, PDFSyntax.stream(fileEntries, subset.bytes))
        numbers.add(toUnicode, PDFSyntax.stream("", Array(toUnicodeMap().utf8)))
        return type0
    }

    /// The `/ToUnicode` CMap: two-byte codes (the CIDs) to UTF-16BE text, in blocks of at most 100.
    func toUnicodeMap() -> String {
        let entries = unicode.sorted { $0.key < $1.key }.map { cid, text in
            "<\(String(format: "%04X", cid))> <\(PDFSyntax.hex(Array(text.utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }))>"
        }
        var blocks = ""
        for start in stride(from: 0, to: entries.count, by: 100) {
            let block = entries[start..<min(start + 100, entries.count)]
            blocks += "\(block.count) beginbfchar\n\(block.joined(separator: "\n"))\nendbfchar\n"
        }
        return """
            /CIDInit /ProcSet findresource begin
            12 dict begin
            begincmap
            /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
            /CMapName /Adobe-Identity-UCS def
            /CMapType 2 def
            1 begincodespacerange
            <0000> <FFFF>
            endcodespacerange
            \(blocks)endcmap
            CMapName currentdict /CMap defineresource pop
            end
            end
            """
    }

    /// The operators that show one line at (`x`, `y`) in `size`-point text: one `TJ` array per
    /// run of equal vertical offset, its numbers moving each glyph from the width `/W` gives to
    /// the shaper's advance, and horizontal offsets applied around the glyph (combining marks).
    func showLine(_ line: ShapedText, x: Double, y: Double, size: Double) -> String {
        var out = "1 0 0 1 \(PDFSyntax.number(x)) \(PDFSyntax.number(y)) Tm\n"
        var items: [String] = []
        var rise = 0
        func flush() {
            if !items.isEmpty { out += "[\(items.joined(separator: " "))] TJ\n" }
            items = []
        }
        for glyph in line.glyphs {
            if glyph.yOffset != rise {
                flush()
                rise = glyph.yOffset
                out += "\(PDFSyntax.number(Double(rise) * size / Double(font.unitsPerEm))) Ts\n"
            }
            let cid = cid(of: glyph.glyph)
            let offset = thousandthsExact(glyph.xOffset)
            if offset != 0 { items.append(PDFSyntax.number(-offset)) }
            items.append("<\(String(format: "%04X", cid))>")
            let adjustment = Double(widths[cid] ?? 0) - thousandthsExact(glyph.xAdvance) + offset
            if abs(adjustment) >= 0.001 { items.append(PDFSyntax.number(adjustment)) }
        }
        flush()
        if rise != 0 { out += "0 Ts\n" }
        return out
    }

    private func thousandthsExact(_ units: Int) -> Double { Double(units) * 1000 / Double(font.unitsPerEm) }
}

/// Object numbers handed out in order, and the objects written under them.
package struct ObjectNumbers {
    /// The next number to hand out.
    package private(set) var next: Int
    /// The objects made so far: number and body (the syntax between `obj` and `endobj`).
    package private(set) var objects: [(number: Int, body: [UInt8])] = []

    /// Starts handing out numbers at `first`.
    package init(first: Int) { next = first }

    /// A new number.
    mutating func take() -> Int {
        defer { next += 1 }
        return next
    }

    /// Records the object `number` with `body`.
    mutating func add(_ number: Int, _ body: String) { add(number, Array(body.utf8)) }

    /// Records the object `number` with `body`.
    mutating func add(_ number: Int, _ body: [UInt8]) { objects.append((number, body)) }
}
