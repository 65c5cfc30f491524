import CertificateProviders
import Foundation
import PDFAppearance

extension SigningPlanObjects {
    /// A drawn appearance and where its widget goes.
    struct PlacedAppearance {
        /// The page the widget is on.
        let page: UInt32
        /// The widget's rectangle.
        let rectangle: PDFRectangle
        /// The object number of the form XObject drawn for it.
        let form: Int
        /// The form XObject and what it uses (fonts, images): binary streams, added to the update
        /// after the placeholders of the other objects are resolved.
        let objects: [IncrementalUpdate.Object]
    }

    static let appearancePlaceholder = "/CertSignPlaceholderAppearance"

    /// Draws the options' appearance (when they have one) as new objects, sized to its rectangle:
    /// the one given, or the existing field's widget's.
    /// - Throws: `.invalidParameter` for a page that does not exist, a rectangle outside its page,
    ///   `.field` placement without an existing empty field (or a rectangle given for one);
    ///   `.fontUnusable`, `.imageUnusable`.
    mutating func drawAppearance(_ options: PDFSignatureOptions, field: FieldChoice) throws -> PlacedAppearance? {
        guard let appearance = options.appearance else { return nil }
        let page: UInt32
        let rectangle: PDFRectangle
        switch (appearance.placement, field.existing) {
        case (.field, let existing?):
            (page, rectangle) = try widgetPlace(existing, name: field.name)
        case (.field, nil):
            throw CertificateProviderError(
                .invalidParameter,
                "'\(input)' has no empty signature field '\(field.name)' to draw the appearance in; give a page "
                    + "and a rectangle for a new one"
            )
        case (.rectangle, _?):
            throw CertificateProviderError(
                .invalidParameter,
                "the field '\(field.name)' exists in '\(input)': its own rectangle is used, do not give one"
            )
        case (.rectangle(let wanted, let given), nil):
            page = try self.page(wanted)
            rectangle = given
            let box = pageBox(page)
            guard rectangle.width > 0, rectangle.height > 0, box.contains(rectangle) else {
                throw CertificateProviderError(
                    .invalidParameter,
                    "the rectangle \(rectangle) lies outside the page (\(box)) or is empty; give x1,y1,x2,y2 "
                        + "inside it, in PDF points"
                )
            }
        }
        let content = try appearance.content(options)
        var numbers = ObjectNumbers(first: nextNumber)
        let form = try AppearanceRenderer.render(
            content,
            width: rectangle.width,
            height: rectangle.height,
            numbers: &numbers
        )
        nextNumber = numbers.next
        return PlacedAppearance(
            page: page,
            rectangle: rectangle,
            form: form,
            objects: numbers.objects.map { .init(number: $0.number, generation: 0, body: $0.body) }
        )
    }

    /// The widget of an existing field: the field itself, or its first kid when the widget is apart.
    func widget(of field: PDFFields.Field) -> UInt32 {
        document.key(field.handle, "/Rect") == nil
            ? document.key(field.handle, "/Kids").flatMap { document.items($0).first } ?? field.handle
            : field.handle
    }

    /// `/AP << /N the form >>` on the existing field's widget (added to the update when it is not
    /// the field itself).
    mutating func attach(_ appearance: PlacedAppearance, to field: PDFFields.Field) {
        let widget = widget(of: field)
        let dictionary = document.newDictionary()
        document.set(dictionary, "/N", document.newName(Self.appearancePlaceholder))
        document.set(widget, "/AP", dictionary)
        if widget != field.handle, document.isIndirect(widget) {
            append(widget, document.objectID(widget))
        }
    }

    /// The page and rectangle of an existing field's widget.
    private func widgetPlace(_ field: PDFFields.Field, name: String) throws -> (UInt32, PDFRectangle) {
        let widget = widget(of: field)
        let numbers = document.key(widget, "/Rect").map(document.items)?.compactMap(document.real) ?? []
        let widgetID = document.objectID(widget)
        let page =
            document.key(widget, "/P")
            ?? (0..<document.pageCount).map(document.page).first { page in
                document.items(document.key(page, "/Annots") ?? document.newArray()).contains {
                    document.objectID($0) == widgetID
                }
            }
        guard numbers.count == 4, let page else {
            throw CertificateProviderError(
                .invalidParameter,
                "the signature field '\(name)' of '\(input)' has no widget on a page to draw the appearance in"
            )
        }
        let rectangle = PDFRectangle(x1: numbers[0], y1: numbers[1], x2: numbers[2], y2: numbers[3])
        guard rectangle.width > 0, rectangle.height > 0 else {
            throw CertificateProviderError(
                .invalidParameter,
                "the signature field '\(name)' of '\(input)' is invisible (its rectangle is empty); give another field"
            )
        }
        return (page, rectangle)
    }

    /// The page asked for.
    /// - Throws: `.invalidParameter` when the document has no such page.
    private func page(_ wanted: PDFSignatureAppearance.Page) throws -> UInt32 {
        let count = document.pageCount
        let number: Int
        switch wanted {
        case .last: number = count
        case .number(let given): number = given
        }
        guard number >= 1, number <= count else {
            throw CertificateProviderError(
                .invalidParameter,
                "page \(number) does not exist: '\(input)' has \(count) page\(count == 1 ? "" : "s")"
            )
        }
        return document.page(number - 1)
    }

    /// The page's visible box: its `/CropBox` or `/MediaBox`, inherited from the page tree when the
    /// page does not say (a US Letter page when nothing does).
    private func pageBox(_ page: UInt32) -> PDFRectangle {
        for key in ["/CropBox", "/MediaBox"] {
            var node: UInt32? = page
            var depth = 0
            while let current = node, depth < 32 {
                if let box = document.key(current, key).map(document.items)?.compactMap(document.real), box.count == 4 {
                    return PDFRectangle(x1: box[0], y1: box[1], x2: box[2], y2: box[3])
                }
                node = document.key(current, "/Parent")
                depth += 1
            }
        }
        return PDFRectangle(x1: 0, y1: 0, x2: 612, y2: 792)
    }
}
