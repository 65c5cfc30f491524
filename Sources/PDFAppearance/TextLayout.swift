internal import CertificateProviders

/// Text wrapped at spaces and sized to fill a box: the largest font size at which every paragraph,
/// wrapped greedily to the box's width, fits its height.
struct TextLayout {
    /// One wrapped line, shaped as a whole.
    struct Line {
        let shaped: ShapedText
    }

    let lines: [Line]
    /// The font size in points.
    let fontSize: Double
    /// The distance between baselines in points.
    let lineHeight: Double

    /// The largest size tried, in points: a signature box's text stays readable, not a headline.
    static let maximumSize = 36.0
    /// The smallest size tried: text that does not fit at it is drawn at it anyway (and clipped).
    static let minimumSize = 2.0

    /// Lays `paragraphs` out in a box of `width` × `height` points.
    init(paragraphs: [String], font: AppearanceFont, width: Double, height: Double) {
        let measure = WordMeasure(font: font)
        let units = Double(font.unitsPerEm)
        let lineFactor = max(1.15, Double(font.metrics.ascender - font.metrics.descender) / units)
        var low = Self.minimumSize
        var high = min(Self.maximumSize, height / lineFactor)
        var best = Self.wrap(paragraphs, measure: measure, maximumUnits: width / low * units)
        if high > low {
            // Twenty halvings place the size within a thousandth of a point of the best fit.
            for _ in 0..<20 {
                let size = (low + high) / 2
                let wrapped = Self.wrap(paragraphs, measure: measure, maximumUnits: width / size * units)
                let fitsWidth = wrapped.allSatisfy { Double(measure.width(of: $0)) <= width / size * units }
                if fitsWidth, Double(wrapped.count) * size * lineFactor <= height {
                    low = size
                    best = wrapped
                } else {
                    high = size
                }
            }
        }
        // Lines kept whole read better (a name is not cut in two): unwrapped paragraphs win when
        // their size is not much smaller than the wrapped one's.
        let widest = paragraphs.map { Double(measure.width(of: $0)) }.max() ?? 0
        let unwrapped = min(
            Self.maximumSize,
            width / max(widest, 1) * units,
            height / lineFactor / Double(max(paragraphs.count, 1))
        )
        if unwrapped >= Self.minimumSize, unwrapped >= low * 0.7 {
            low = unwrapped
            best = paragraphs
        }
        fontSize = low
        lineHeight = low * lineFactor
        lines = best.map { Line(shaped: ShapedText($0, font: font)) }
    }

    /// Greedy wrapping: words join a line while its width stays within `maximumUnits`.
    private static func wrap(_ paragraphs: [String], measure: WordMeasure, maximumUnits: Double) -> [String] {
        var lines: [String] = []
        for paragraph in paragraphs {
            var current = ""
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: true).map(String.init) {
                let candidate = current.isEmpty ? word : current + " " + word
                if current.isEmpty || Double(measure.width(of: candidate)) <= maximumUnits {
                    current = candidate
                } else {
                    lines.append(current)
                    current = word
                }
            }
            lines.append(current)
        }
        return lines
    }
}

/// Line widths from words shaped once each: a line's width is its words' widths plus its spaces'.
final class WordMeasure {
    private let font: AppearanceFont
    private var words: [String: Int] = [:]
    private let space: Int

    init(font: AppearanceFont) {
        self.font = font
        space = ShapedText(" ", font: font).width
    }

    /// The width of `line` in font units.
    func width(of line: String) -> Int {
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        return parts.reduce(space * (parts.count - 1)) { total, part in
            let word = String(part)
            if let known = words[word] { return total + known }
            let measured = ShapedText(word, font: font).width
            words[word] = measured
            return total + measured
        }
    }
}
