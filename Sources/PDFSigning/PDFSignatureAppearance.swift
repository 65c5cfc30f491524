public import CertificateProviders
public import Foundation
import PDFAppearance

extension CertificateProviderError.Code {
    /// A font cannot draw a signature appearance: the file is not a TrueType/OpenType font, the
    /// default font is not installed (the reason names the Debian package), or it has no glyph for
    /// some characters of the text (the reason names them). Give another font.
    public static let fontUnusable = Self(PDFAppearanceCodeName.fontUnusable)
    /// An appearance image is not a PNG or JPEG file, or is damaged. Give another image.
    public static let imageUnusable = Self(PDFAppearanceCodeName.imageUnusable)
}

/// What a visible signature shows and where: text (a template filled in with the signer, the date,
/// the reason…), an image, or both, in a rectangle of a page or in an existing empty signature
/// field's widget.
///
/// ```swift
/// var options = PDFSignatureOptions(reason: "Approved")
/// options.appearance = PDFSignatureAppearance(placement: .rectangle(page: .last, PDFRectangle(x1: 50, y1: 50, x2: 250, y2: 110)))
/// ```
public struct PDFSignatureAppearance: Sendable {
    /// A page by its number (from 1) or the last one.
    public enum Page: Sendable, Hashable {
        /// The page of that number, counted from 1.
        case number(Int)
        /// The document's last page.
        case last
    }

    /// Where the appearance goes.
    public enum Placement: Sendable, Hashable {
        /// A rectangle of a page, in PDF points of the page's default user space (origin bottom left).
        case rectangle(page: Page, PDFRectangle)
        /// The widget of the existing empty signature field that ``PDFSignatureOptions/fieldName``
        /// names: its page and rectangle.
        case field
    }

    /// The template fields, each `%(name)`: `signer` (the certificate's common name), `date` (the
    /// signing time, UTC), `reason`, `location`, `contact` (the options' values, empty when not
    /// given) and `issuer` (the issuing CA's common name).
    public static let templateFields = ["signer", "date", "reason", "location", "contact", "issuer"]

    /// Where it goes. Default: a rectangle on the first page.
    public var placement: Placement
    /// Whether text is drawn. Default true.
    public var showsText: Bool
    /// The text template; nil: "Digitally signed by %(signer)", "Date: %(date)" and, when they are
    /// given, "Reason: %(reason)" and "Location: %(location)", one line each.
    public var textTemplate: String?
    /// A TrueType or OpenType font file for the text; nil: DejaVu Sans (Debian's fonts-dejavu-core),
    /// which covers Latin, Cyrillic and Greek.
    public var fontFile: URL?
    /// A PNG (its alpha kept as a soft mask) or JPEG image drawn at the left of the text, or alone.
    /// Default nil.
    public var imageFile: URL?
    /// The signer's and issuer's names, taken from the signing certificate when signing starts.
    var signerNames: (signer: String, issuer: String)?

    /// Creates an appearance; every parameter defaults to the value documented on its property.
    public init(
        placement: Placement = .rectangle(page: .number(1), PDFRectangle(x1: 36, y1: 36, x2: 236, y2: 96)),
        showsText: Bool = true,
        textTemplate: String? = nil,
        fontFile: URL? = nil,
        imageFile: URL? = nil
    ) {
        self.placement = placement
        self.showsText = showsText
        self.textTemplate = textTemplate
        self.fontFile = fontFile
        self.imageFile = imageFile
    }

    /// The template in use: the one given, or the default for `options`.
    func template(_ options: PDFSignatureOptions) -> AppearanceTemplate {
        if let textTemplate { return AppearanceTemplate(textTemplate) }
        var lines = ["Digitally signed by %(signer)", "Date: %(date)"]
        if options.reason != nil { lines.append("Reason: %(reason)") }
        if options.location != nil { lines.append("Location: %(location)") }
        return AppearanceTemplate(lines.joined(separator: "\n"))
    }

    /// What to draw, with the template filled in and the image read.
    /// - Throws: `.invalidParameter` for an unknown template field or nothing to draw;
    ///   `.imageUnusable`.
    func content(_ options: PDFSignatureOptions) throws -> AppearanceRenderer.Content {
        guard showsText || imageFile != nil else {
            throw CertificateProviderError(.invalidParameter, "the appearance shows neither text nor an image")
        }
        let date = options.signingTime ?? Date()
        let values = [
            "signer": signerNames?.signer ?? "", "issuer": signerNames?.issuer ?? "",
            "date": Self.dateFormatter.string(from: date), "reason": options.reason ?? "",
            "location": options.location ?? "", "contact": options.contactInfo ?? "",
        ]
        return AppearanceRenderer.Content(
            paragraphs: showsText ? try template(options).fill(values) : nil,
            fontFile: fontFile,
            image: try imageFile.map(AppearanceImage.init(contentsOf:))
        )
    }

    /// The date as the appearance shows it: `2026-12-07 09:30:00 UTC`.
    private static var dateFormatter: DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter
    }

    /// The common name of an RFC 4514-ish distinguished name (`CN=…, O=…`), or the whole name.
    static func commonName(of name: String) -> String {
        for part in name.split(separator: ",") {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("CN=") { return String(trimmed.dropFirst(3)) }
        }
        return name
    }
}

/// A rectangle in PDF points; the corners may come in any order.
public struct PDFRectangle: Sendable, Hashable, CustomStringConvertible {
    /// The smaller x.
    public let x1: Double
    /// The smaller y.
    public let y1: Double
    /// The larger x.
    public let x2: Double
    /// The larger y.
    public let y2: Double

    /// A rectangle between two corners.
    public init(x1: Double, y1: Double, x2: Double, y2: Double) {
        self.x1 = min(x1, x2)
        self.y1 = min(y1, y2)
        self.x2 = max(x1, x2)
        self.y2 = max(y1, y2)
    }

    /// Width in points.
    public var width: Double { x2 - x1 }
    /// Height in points.
    public var height: Double { y2 - y1 }
    /// `[x1 y1 x2 y2]` as PDF syntax.
    var pdfArray: String { "[\([x1, y1, x2, y2].map(Self.number).joined(separator: " "))]" }
    /// `x1,y1,x2,y2`.
    public var description: String { [x1, y1, x2, y2].map(Self.number).joined(separator: ",") }

    /// Whether `other` lies inside this rectangle (edges included).
    func contains(_ other: PDFRectangle) -> Bool {
        other.x1 >= x1 && other.y1 >= y1 && other.x2 <= x2 && other.y2 <= y2
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(format: "%.3f", value)
    }
}

extension PDFSignatureOptions {
    /// These options with the appearance's signer and issuer names taken from `certificate`, and the
    /// signing time fixed now, so that `/M` and the appearance's date agree.
    func resolvingAppearance(signer certificate: Certificate) -> PDFSignatureOptions {
        guard var appearance else { return self }
        var options = self
        appearance.signerNames = (
            certificate.subjectAttribute("CN") ?? certificate.subject,
            PDFSignatureAppearance.commonName(of: certificate.issuer)
        )
        options.appearance = appearance
        if options.signingTime == nil { options.signingTime = Date() }
        return options
    }
}
