import CertificateProviders
import Foundation

/// The objects a ``SigningPlan`` rewrites or adds: the signature field (an existing empty one, or
/// a new widget on the first page), the form and the catalog, with placeholders for the object
/// numbers resolved once all are known.
struct SigningPlanObjects {
    /// The field the signature goes in.
    struct FieldChoice {
        let name: String
        /// An existing empty signature field of that name, else nil (a new one is added).
        let existing: PDFFields.Field?
    }

    let document: QPDFDocument
    let input: String
    /// The next free object number.
    var nextNumber: Int
    /// The object number of the signature dictionary.
    let signatureNumber: Int
    var update = IncrementalUpdate()
    /// Whether the catalog changed for another reason than the form (a certification's `/Perms`),
    /// so that it is rewritten even when its `/AcroForm` is an indirect object.
    var rewritesCatalog = false

    init(document: QPDFDocument, input: String, nextNumber: Int) {
        self.document = document
        self.input = input
        self.signatureNumber = nextNumber
        self.nextNumber = nextNumber + 1
    }

    /// The field named `wanted`, or the first free `SignatureN`.
    /// - Throws: `.alreadyExists` when the wanted field is signed or not a signature field.
    func chooseField(_ wanted: String?) throws -> FieldChoice {
        let fields = PDFFields(document: document)
        guard let wanted else {
            let existingNames = Set(fields.all.map(\.name))
            // `(1...)` is endless, so a free name is always found.
            return FieldChoice(
                name: (1...).lazy.map { "Signature\($0)" }.first { !existingNames.contains($0) }!,
                existing: nil
            )
        }
        guard let field = fields.all.first(where: { $0.name == wanted }) else {
            return FieldChoice(name: wanted, existing: nil)
        }
        guard field.isSignature, document.key(field.handle, "/V") == nil, document.isIndirect(field.handle) else {
            throw CertificateProviderError(
                .alreadyExists,
                "the PDF already has a field '\(wanted)' that is signed or not a signature field; choose "
                    + "another --field"
            )
        }
        return FieldChoice(name: wanted, existing: field)
    }

    /// Fills the existing field or adds a new one (with `appearance`'s widget when given), sets
    /// `/SigFlags` and rewrites the form (or the catalog that holds it), then resolves the placeholders.
    /// - Throws: `.malformedInput` for a PDF without pages when a new field is needed.
    mutating func addField(_ field: FieldChoice, appearance: PlacedAppearance? = nil) throws {
        let root = document.root
        var acroForm = document.key(root, "/AcroForm")
        let acroFormIndirect = acroForm.map(document.isIndirect) ?? false
        if acroForm == nil { acroForm = document.newDictionary() }
        // Set just above when the catalog had none.
        let form = acroForm!
        let fieldNumber: Int
        if let existing = field.existing {
            document.set(existing.handle, "/V", document.newName(SigningPlan.signaturePlaceholder))
            if let appearance { attach(appearance, to: existing) }
            let id = document.objectID(existing.handle)
            fieldNumber = id.number
            append(existing.handle, id)
        } else {
            fieldNumber = nextNumber
            nextNumber += 1
            try addWidget(named: field.name, number: fieldNumber, form: form, appearance: appearance)
        }
        document.set(form, "/SigFlags", document.newInteger(3))
        if acroFormIndirect {
            append(form, document.objectID(form))
        } else {
            document.set(root, "/AcroForm", form)
        }
        if !acroFormIndirect || rewritesCatalog { append(root, document.objectID(root)) }
        let signatureNumber = signatureNumber
        update.objects = update.objects.map { object in
            let text = String(decoding: object.body, as: UTF8.self)
                .replacingOccurrences(of: SigningPlan.signaturePlaceholder, with: "\(signatureNumber) 0 R")
                .replacingOccurrences(of: SigningPlan.fieldPlaceholder, with: "\(fieldNumber) 0 R")
                .replacingOccurrences(of: Self.appearancePlaceholder, with: "\(appearance?.form ?? 0) 0 R")
            return .init(number: object.number, generation: object.generation, body: Array(text.utf8))
        }
    }

    /// A new widget listed in its page's `/Annots` and the form's `/Fields`: invisible on the first
    /// page, or `appearance`'s on its page.
    private mutating func addWidget(
        named name: String,
        number fieldNumber: Int,
        form: UInt32,
        appearance: PlacedAppearance?
    ) throws {
        guard document.pageCount > 0 else {
            throw CertificateProviderError(.malformedInput, "'\(input)' has no pages")
        }
        let page = appearance?.page ?? document.page(0)
        let annotations = document.newArray()
        for item in document.items(document.key(page, "/Annots") ?? document.newArray()) {
            document.append(annotations, item)
        }
        document.append(annotations, document.newName(SigningPlan.fieldPlaceholder))
        document.set(page, "/Annots", annotations)
        append(page, document.objectID(page))
        let widget =
            "<< /Type /Annot /Subtype /Widget /FT /Sig /T \(PDFBytes.textString(name)) /V "
            + "\(signatureNumber) 0 R /F 132 /Rect \(appearance?.rectangle.pdfArray ?? "[0 0 0 0]") /P "
            + "\(document.unparse(page))\(appearance.map { " /AP << /N \($0.form) 0 R >>" } ?? "") >>"
        update.objects.append(.init(number: fieldNumber, generation: 0, body: Array(widget.utf8)))
        let fieldArray = document.newArray()
        for item in document.items(document.key(form, "/Fields") ?? document.newArray()) {
            document.append(fieldArray, item)
        }
        document.append(fieldArray, document.newName(SigningPlan.fieldPlaceholder))
        document.set(form, "/Fields", fieldArray)
    }

    /// Adds the object's current (resolved) text to the update under its own number.
    mutating func append(_ handle: UInt32, _ id: (number: Int, generation: Int)) {
        update.objects.append(
            .init(number: id.number, generation: id.generation, body: Array(document.unparseResolved(handle).utf8))
        )
    }
}
