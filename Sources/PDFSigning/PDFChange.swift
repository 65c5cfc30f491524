/// One thing a revision after a signature changed, as the change analysis classified it.
public struct PDFChange: Sendable, Hashable, CustomStringConvertible {
    /// Its class: ``PDFLaterChanges/signatures`` (a new signature field, its widget and value,
    /// `/SigFlags`, a new `/Perms`), ``PDFLaterChanges/ltv`` (`/DSS`, a document timestamp,
    /// document metadata), ``PDFLaterChanges/formFields`` (a value or appearance of a field that
    /// existed when signed), ``PDFLaterChanges/annotations`` (any other new or changed
    /// annotation) or ``PDFLaterChanges/other`` (everything else).
    public let kind: PDFLaterChanges
    /// The revision (1-based, see ``PDFSignatureReport/revision``) that made the change.
    public let revision: Int
    /// The numbers of the objects involved (in that revision).
    public let objects: [Int]
    /// The change in words (`page 1 (object 4) /Contents refers to object 40 instead of object 5`).
    public let text: String
    /// Whether the signature's modification policy (DocMDP, FieldMDP) allows it.
    public let isAllowed: Bool

    /// `revision 3: TEXT (kind, objects 4 40; not allowed)`.
    public var description: String {
        let objectList = objects.isEmpty ? "" : ", objects " + objects.map(String.init).joined(separator: " ")
        return "revision \(revision): \(text) (\(kind)\(objectList)\(isAllowed ? "" : "; not allowed"))"
    }
}

/// What a signature allows to change after it: DocMDP (a certification signature's `/P`) and
/// FieldMDP (`/Lock`, `/Reference` `/FieldMDP`).
struct PDFModificationPolicy: Sendable {
    /// The DocMDP permission in force (1 no changes, 2 form filling and signing, 3 also
    /// annotations); nil without a certification signature.
    var permission: Int?
    /// The certification signature's revision: its permission governs the revisions after it.
    var certifiedRevision: Int = 0
    /// FieldMDP: which fields this signature locks.
    var lock: FieldLock?

    /// Takes the certification signature's DocMDP permission (signed in `revision`) when this
    /// signature has none of its own.
    mutating func certified(by certification: PDFModificationPolicy, _ revision: Int?) {
        guard permission == nil, let level = certification.permission else { return }
        permission = level
        certifiedRevision = revision ?? 0
    }

    /// A FieldMDP lock: `/Action /All`, `/Include` or `/Exclude` with `/Fields`.
    struct FieldLock: Sendable {
        var action: String
        var fields: Set<String>
        func locks(_ name: String) -> Bool {
            switch action {
            case "/All": return true
            case "/Include": return fields.contains(name)
            case "/Exclude": return !fields.contains(name)
            default: return true
            }
        }
    }

    /// Classifies `change` (made in `revision`) under the policy: a locked field's change becomes
    /// `other`; DocMDP P=1 allows only LTV updates, P=2 also form filling and signatures, P=3 also
    /// annotations; without certification, signatures, LTV updates and form filling are allowed.
    func judge(_ change: PDFRevisionChange, revision: Int) -> PDFChange {
        var kind = change.kind
        var text = change.text
        if kind == .formFields, let field = change.field, lock?.locks(field) == true {
            kind = .other
            text += " (the field is locked by the signature)"
        }
        let level = revision > certifiedRevision ? permission : nil
        let allowed: Bool
        switch kind {
        case .ltv: allowed = true
        case .signatures, .formFields: allowed = level.map { $0 >= 2 } ?? true
        case .annotations: allowed = level.map { $0 >= 3 } ?? false
        default: allowed = false
        }
        if !allowed, let level, kind != .other {
            text += " (the certification signature's DocMDP /P \(level) does not allow it)"
        }
        return PDFChange(kind: kind, revision: revision, objects: change.objects, text: text, isAllowed: allowed)
    }
}
