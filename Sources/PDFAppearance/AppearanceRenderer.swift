internal import CertificateProviders
package import Foundation

/// Draws a signature appearance: text (shaped, wrapped and sized to the box, in an embedded font
/// subset) and/or an image, as a form XObject of the box's size with the objects it uses.
package enum AppearanceRenderer {
    /// What to draw.
    package struct Content {
        /// The lines of text (already filled in), or nil for none.
        package var paragraphs: [String]?
        /// The font to draw text with; nil: ``DefaultFont``.
        package var fontFile: URL?
        /// The image, or nil for none.
        package var image: AppearanceImage?

        /// Creates the content to draw.
        package init(paragraphs: [String]?, fontFile: URL?, image: AppearanceImage?) {
            self.paragraphs = paragraphs
            self.fontFile = fontFile
            self.image = image
        }
    }

    /// Checks that the text can be drawn before anything is signed: the font opens and has a
    /// glyph for every character.
    /// - Throws: `.fontUnusable` naming the font and the characters it lacks.
    package static func checkFont(for content: Content) throws {
        guard let paragraphs = content.paragraphs else { return }
        _ = try openFont(content.fontFile, for: paragraphs)
    }

    /// Renders `content` into a `width` × `height` point form XObject; its objects and those it
    /// uses are added to `numbers`.
    /// - Returns: the form XObject's object number.
    /// - Throws: `.fontUnusable` for a font that cannot be read or lacks glyphs for the text.
    package static func render(
        _ content: Content,
        width: Double,
        height: Double,
        numbers: inout ObjectNumbers
    ) throws -> Int {
        let form = numbers.take()
        let padding = min(width, height) * 0.04
        var textBox = (x: padding, y: padding, width: width - 2 * padding, height: height - 2 * padding)
        var drawing = "q\n"
        var resources: [String] = []
        if let image = content.image {
            let aspect = Double(image.width) / Double(image.height)
            let area = content.paragraphs == nil ? textBox.width : textBox.width * 0.4
            let drawnWidth = min(area, textBox.height * aspect)
            let drawnHeight = drawnWidth / aspect
            let x = content.paragraphs == nil ? textBox.x + (textBox.width - drawnWidth) / 2 : textBox.x
            let y = textBox.y + (textBox.height - drawnHeight) / 2
            let imageNumber = image.objects(&numbers)
            resources.append("/XObject << /Im1 \(imageNumber) 0 R >>")
            drawing +=
                "q \(PDFSyntax.number(drawnWidth)) 0 0 \(PDFSyntax.number(drawnHeight)) \(PDFSyntax.number(x)) "
                + "\(PDFSyntax.number(y)) cm /Im1 Do Q\n"
            textBox.x += drawnWidth + padding
            textBox.width -= drawnWidth + padding
        }
        if let paragraphs = content.paragraphs, textBox.width > 0, textBox.height > 0 {
            let font = try openFont(content.fontFile, for: paragraphs)
            let layout = TextLayout(paragraphs: paragraphs, font: font, width: textBox.width, height: textBox.height)
            let embedded = try EmbeddedFont(font, lines: layout.lines.map(\.shaped))
            resources.append("/Font << /F1 \(embedded.objects(&numbers)) 0 R >>")
            drawing += "BT\n0 g\n/F1 \(PDFSyntax.number(layout.fontSize)) Tf\n"
            let ascent = Double(font.metrics.ascender) / Double(font.unitsPerEm) * layout.fontSize
            let blockHeight = Double(layout.lines.count) * layout.lineHeight
            var baseline = textBox.y + textBox.height - max(0, textBox.height - blockHeight) / 2 - ascent
            for line in layout.lines {
                let lineWidth = Double(line.shaped.width) / Double(font.unitsPerEm) * layout.fontSize
                let x = line.shaped.isRightToLeft ? textBox.x + textBox.width - lineWidth : textBox.x
                drawing += embedded.showLine(line.shaped, x: x, y: baseline, size: layout.fontSize)
                baseline -= layout.lineHeight
            }
            drawing += "ET\n"
        }
        drawing += "Q\n"
        numbers.add(
            form,
            PDFSyntax.stream(
                "/Type /XObject /Subtype /Form /BBox [0 0 \(PDFSyntax.number(width)) \(PDFSyntax.number(height))] "
                    + "/Resources << \(resources.joined(separator: " ")) >>",
                Array(drawing.utf8)
            )
        )
        return form
    }

    /// Opens the font (or the default one) and checks it has a glyph for every character.
    private static func openFont(_ file: URL?, for paragraphs: [String]) throws -> AppearanceFont {
        let font = try AppearanceFont(contentsOf: file ?? DefaultFont.locate())
        let missing = ShapedText.missingCharacters(in: paragraphs.joined(separator: "\n"), font: font)
        guard missing.isEmpty else {
            let named = missing.map { character in
                let scalars = character.unicodeScalars.map { String(format: "U+%04X", $0.value) }.joined(separator: " ")
                return "'\(character)' (\(scalars))"
            }
            throw CertificateProviderError.fontUnusable(
                "the font '\(font.url.path)' has no glyph for \(named.joined(separator: ", ")); give a font "
                    + "that covers them with --font"
            )
        }
        return font
    }
}
