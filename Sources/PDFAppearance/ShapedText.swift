internal import CHarfBuzz
internal import CertificateProviders

/// One line of text shaped by HarfBuzz: glyphs in visual order with their positions in font units,
/// and which characters each glyph stands for (for `/ToUnicode`).
struct ShapedText {
    /// One glyph and where it goes.
    struct Glyph {
        /// The glyph's index in the original font.
        let glyph: UInt32
        /// The characters of its cluster when it is the cluster's first glyph, else empty.
        let text: String
        let xAdvance: Int
        let xOffset: Int
        let yOffset: Int
    }

    let glyphs: [Glyph]
    /// Whether the shaper laid the text out right to left.
    let isRightToLeft: Bool
    /// The sum of the advances, in font units.
    var width: Int { glyphs.reduce(0) { $0 + $1.xAdvance } }

    /// Shapes `text` with `font`. HarfBuzz shapes one direction at a time, so the text is cut into
    /// runs of right-to-left letters (Hebrew, Arabic and their neighbours) and of everything else,
    /// white space and punctuation staying with the run before them; each run is shaped in its own
    /// direction and the runs are placed in the order of the line's first strong letter (a
    /// two-level simplification of the Unicode bidirectional algorithm that keeps names whole).
    init(_ text: String, font: AppearanceFont) {
        var runs: [(text: String, rightToLeft: Bool)] = []
        var baseRightToLeft: Bool?
        for character in text {
            let strong = Self.strongDirection(character)
            if baseRightToLeft == nil { baseRightToLeft = strong }
            if let strong, let last = runs.last, last.rightToLeft != strong {
                runs.append((String(character), strong))
            } else if runs.isEmpty {
                runs.append((String(character), strong ?? false))
            } else {
                runs[runs.count - 1].text.append(character)
            }
        }
        isRightToLeft = baseRightToLeft ?? false
        let ordered = isRightToLeft ? runs.reversed() : runs
        glyphs = ordered.flatMap { Self.shapeRun($0.text, rightToLeft: $0.rightToLeft, font: font) }
    }

    /// True for a right-to-left letter, false for another letter, nil for anything else.
    private static func strongDirection(_ character: Character) -> Bool? {
        guard let scalar = character.unicodeScalars.first, character.isLetter else { return nil }
        let rightToLeftBlocks: [ClosedRange<UInt32>] = [
            0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF,
        ]
        return rightToLeftBlocks.contains { $0.contains(scalar.value) }
    }

    /// One run shaped in one direction: glyphs in visual order, each cluster's text on its first glyph.
    private static func shapeRun(_ text: String, rightToLeft: Bool, font: AppearanceFont) -> [Glyph] {
        let buffer = hb_buffer_create()
        defer { hb_buffer_destroy(buffer) }
        let utf8 = Array(text.utf8)
        utf8.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                hb_buffer_add_utf8(buffer, $0.baseAddress, Int32($0.count), 0, Int32($0.count))
            }
        }
        hb_buffer_set_direction(buffer, rightToLeft ? HB_DIRECTION_RTL : HB_DIRECTION_LTR)
        hb_buffer_guess_segment_properties(buffer)
        hb_shape(font.font, buffer, nil, 0)
        var count: UInt32 = 0
        let infos = hb_buffer_get_glyph_infos(buffer, &count)
        let positions = hb_buffer_get_glyph_positions(buffer, &count)
        guard let infos, let positions, count > 0 else { return [] }
        let boundaries = Set((0..<Int(count)).map { Int(infos[$0].cluster) }).sorted() + [utf8.count]
        var seen = Set<Int>()
        return (0..<Int(count)).map { index in
            let cluster = Int(infos[index].cluster)
            var text = ""
            if seen.insert(cluster).inserted, let position = boundaries.firstIndex(of: cluster) {
                text = String(decoding: utf8[cluster..<boundaries[position + 1]], as: UTF8.self)
            }
            return Glyph(
                glyph: infos[index].codepoint,
                text: text,
                xAdvance: Int(positions[index].x_advance),
                xOffset: Int(positions[index].x_offset),
                yOffset: Int(positions[index].y_offset)
            )
        }
    }

    /// The characters `font` has no glyph for, each once, in the order they appear.
    /// (A glyph 0, `.notdef`, stands for its whole cluster.)
    static func missingCharacters(in text: String, font: AppearanceFont) -> [Character] {
        var missing: [Character] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let shaped = ShapedText(String(line), font: font)
            for glyph in shaped.glyphs where glyph.glyph == 0 {
                for character in glyph.text where !character.isWhitespace && !missing.contains(character) {
                    missing.append(character)
                }
            }
        }
        return missing
    }
}
