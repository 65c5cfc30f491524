import Foundation
import PDFSigning

extension Commands.SignOptions {
    /// `--appearance`, `--page`, `--rect`, `--text`, `--font`, `--image`: a visible PAdES signature.
    struct AppearanceArguments {
        /// What the appearance shows.
        enum Kind: String, CaseIterable {
            case text
            case image
            case textAndImage = "text+image"
        }

        var kind: Kind?
        var page: PDFSignatureAppearance.Page?
        var rectangle: PDFRectangle?
        var text: String?
        var font: String?
        var image: String?

        /// Whether any appearance option was given.
        var isGiven: Bool {
            kind != nil || page != nil || rectangle != nil || text != nil || font != nil || image != nil
        }

        /// The library's appearance for these options (nil without `--appearance`): in the rectangle
        /// given, else in the existing field `--field` names.
        func make() -> PDFSignatureAppearance? {
            guard let kind else { return nil }
            return PDFSignatureAppearance(
                placement: rectangle.map { .rectangle(page: page ?? .number(1), $0) } ?? .field,
                showsText: kind != .image,
                textTemplate: text,
                fontFile: font.map { URL(fileURLWithPath: $0) },
                imageFile: image.map { URL(fileURLWithPath: $0) }
            )
        }
    }

    /// The options of a visible signature.
    static var appearanceOptions: [OptionBinding<Self>] {
        let kinds = AppearanceArguments.Kind.allCases.map(\.rawValue)
        return [
            .value(
                \.appearance.kind,
                "--appearance",
                "KIND",
                "PAdES: a visible signature showing text, image or text+image, in --rect on --page or in the\n"
                    + "empty signature field --field names",
                type: .choice(kinds)
            ) { text in
                guard let kind = AppearanceArguments.Kind(rawValue: text) else {
                    throw InvalidValue(message: "unknown --appearance '\(text)' (\(Help.alternatives(kinds)))")
                }
                return kind
            },
            .value(\.appearance.page, "--page", "N|last", "PAdES --appearance: the page of --rect", default: "1") {
                try page($0)
            },
            .value(
                \.appearance.rectangle,
                "--rect",
                "X1,Y1,X2,Y2",
                "PAdES --appearance: the box, in PDF points from the page's bottom left corner"
            ) { try rectangle($0) },
            .value(
                \.appearance.text,
                "--text",
                "TEMPLATE",
                "PAdES --appearance: the text, with %(signer) %(date) %(reason) %(location) %(contact) %(issuer);\n"
                    + "\\n starts a new line",
                default: "signer, date, and reason and location when given"
            ) { $0 },
            .value(
                \.appearance.font,
                "--font",
                "FILE",
                "PAdES --appearance: a TrueType or OpenType font for the text",
                type: .file,
                default: "DejaVu Sans (Debian fonts-dejavu-core)"
            ) { $0 },
            .value(
                \.appearance.image,
                "--image",
                "FILE",
                "PAdES --appearance image or text+image: a PNG (alpha kept) or JPEG image",
                type: .file
            ) { $0 },
        ]
    }

    /// `--page N|last`: a page number from 1, or `last`.
    static func page(_ text: String) throws -> PDFSignatureAppearance.Page {
        if text == "last" { return .last }
        guard let number = Int(text), number >= 1 else {
            throw InvalidValue(message: "--page '\(text)' is not a page number (1, 2, …) or 'last'")
        }
        return .number(number)
    }

    /// `--rect x1,y1,x2,y2`: four numbers.
    static func rectangle(_ text: String) throws -> PDFRectangle {
        let numbers = text.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        guard numbers.count == 4, let x1 = numbers[0], let y1 = numbers[1], let x2 = numbers[2], let y2 = numbers[3],
            [x1, y1, x2, y2].allSatisfy(\.isFinite)
        else {
            throw InvalidValue(message: "--rect '\(text)' is not four numbers x1,y1,x2,y2 (PDF points)")
        }
        return PDFRectangle(x1: x1, y1: y1, x2: x2, y2: y2)
    }

    /// The rules between the appearance options.
    func validateAppearance() throws {
        guard appearance.isGiven else { return }
        guard format == .pades else {
            throw InvalidValue(message: "--appearance and its options go with --format pades")
        }
        guard let kind = appearance.kind else {
            throw InvalidValue(message: "--page, --rect, --text, --font and --image go with --appearance")
        }
        if appearance.rectangle == nil, field == nil {
            throw InvalidValue(message: "--appearance needs --rect X1,Y1,X2,Y2 or an empty signature field's --field")
        }
        if appearance.rectangle == nil, appearance.page != nil {
            throw InvalidValue(message: "--page goes with --rect (a --field has its own page)")
        }
        if kind == .text, appearance.image != nil {
            throw InvalidValue(message: "--image goes with --appearance image or text+image")
        }
        if kind != .text, appearance.image == nil {
            throw InvalidValue(message: "--appearance \(kind.rawValue) needs --image FILE")
        }
        if kind == .image, appearance.text != nil || appearance.font != nil {
            throw InvalidValue(message: "--text and --font go with --appearance text or text+image")
        }
    }
}
