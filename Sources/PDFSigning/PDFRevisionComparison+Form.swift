internal import CQPDF

/// The interactive form, step 2 of ``PDFRevisionComparison``: the form's own entries, the fields
/// that existed (their values and appearances, by content) and the fields added.
extension PDFRevisionComparison {
    /// Fields nested deeper than this are not followed: the nesting itself is a change.
    static let maximumFieldDepth = 32

    /// Where a field sits: its parent's full name, the type and signature state it inherits, and
    /// how deep it is.
    struct FieldContext {
        var name: String?
        var type: String?
        /// A signature value (`/V`) on the field or a parent in the older revision.
        var signedBefore = false
        /// A signature value on the field or a parent in the newer revision.
        var signedNow = false
        var depth = 0
    }

    func form(_ a: qpdf_oh?, _ b: qpdf_oh?) {
        guard let b, new.isDictionary(b) else {
            if let a, old.isDictionary(a) { note(.other, [], "the interactive form (/AcroForm) was removed") }
            return
        }
        let formNumber = number(b, in: new)
        _ = firstVisit(a, b)
        let formA = a.flatMap { old.isDictionary($0) ? $0 : nil }
        let keys = Set((formA.map(old.keys) ?? []) + new.keys(b))
        for key in keys.sorted() where key != "/Fields" {
            let kind: PDFLaterChanges =
                ["/SigFlags", "/NeedAppearances", "/DR", "/DA"].contains(key) ? .signatures : .other
            compare(
                formA.flatMap { old.key($0, key) },
                new.key(b, key),
                path: "the form's \(key)",
                kind: kind,
                holder: formNumber
            )
        }
        let fieldsA = formA.flatMap { old.key($0, "/Fields") }.map(old.items) ?? []
        let fieldsB = new.key(b, "/Fields").map(new.items) ?? []
        let numbersB = fieldsB.map { number($0, in: new) }
        for existing in fieldsA {
            let id = number(existing, in: old)
            guard let position = numbersB.firstIndex(of: id), id != 0 else {
                note(.other, [formNumber, id], "form field \(id) was removed from the form")
                continue
            }
            field(existing, fieldsB[position], parent: FieldContext())
        }
        let numbersA = Set(fieldsA.map { number($0, in: old) })
        for (position, added) in fieldsB.enumerated() where !numbersA.contains(numbersB[position]) {
            newField(added, parentName: nil, formNumber: formNumber)
        }
        if addsSignatureValue {
            for reuse in PDFSignatureFieldRule.reusedValues(old: old, new: new) {
                note(.other, reuse.objects, reuse.text)
            }
        }
    }

    private func fullName(_ handle: qpdf_oh, in document: QPDFDocument, parentName: String?) -> String {
        let own = document.key(handle, "/T").flatMap(document.text)
        switch (parentName, own) {
        case (let parent?, let own?): return "\(parent).\(own)"
        case (let parent?, nil): return parent
        case (nil, let own?): return own
        case (nil, nil): return "(unnamed)"
        }
    }

    /// Every object of a field's subtree (the field, its kids and widgets).
    private func subtree(_ handle: qpdf_oh, into set: inout Set<Int>, depth: Int = 0) {
        let id = number(handle, in: new)
        guard depth < Self.maximumFieldDepth, id == 0 || set.insert(id).inserted else { return }
        for kid in new.key(handle, "/Kids").map(new.items) ?? [] { subtree(kid, into: &set, depth: depth + 1) }
    }

    private func newField(_ handle: qpdf_oh, parentName: String?, formNumber: Int) {
        let name = fullName(handle, in: new, parentName: parentName)
        let id = number(handle, in: new)
        let type = new.key(handle, "/FT").map(new.unparse)
        guard type == "/Sig" else {
            subtree(handle, into: &newFieldObjects)
            note(.other, [id, formNumber], "a new form field '\(name)' (\(type ?? "no /FT")) was added")
            return
        }
        subtree(handle, into: &newSignatureObjects)
        let value = new.key(handle, "/V")
        if value != nil { addsSignatureValue = true }
        let rule = PDFSignatureFieldRule(document: new)
        for finding in rule.check(newField: handle, name: name, isSigned: value != nil) {
            note(finding.kind, finding.objects, finding.text, field: name)
        }
        let isTimestamp = value.flatMap { new.key(new.dictionary(of: $0), "/Type") }.map {
            new.isName($0, "/DocTimeStamp")
        }
        if isTimestamp == true {
            note(.ltv, [id, number(value, in: new)], "a new document timestamp '\(name)'")
        } else {
            let what = value == nil ? "a new unsigned signature field" : "a new signature field"
            note(.signatures, [id, number(value, in: new)], "\(what) '\(name)'", field: name)
        }
    }

    private func field(_ a: qpdf_oh, _ b: qpdf_oh, parent: FieldContext) {
        let id = number(b, in: new)
        if id != 0 { formObjects.insert(id) }
        guard parent.depth < Self.maximumFieldDepth else {
            note(.other, [id], "form field object \(id) is nested more than \(Self.maximumFieldDepth) levels deep")
            return
        }
        guard firstVisit(a, b) else { return }
        var context = parent
        context.name = fullName(b, in: new, parentName: parent.name)
        context.type = new.key(b, "/FT").map(new.unparse) ?? parent.type
        context.signedBefore = parent.signedBefore || old.key(a, "/V") != nil
        context.signedNow = parent.signedNow || new.key(b, "/V") != nil
        context.depth += 1
        for key in Set(old.keys(a) + new.keys(b)).sorted() where !["/Parent", "/P", "/Kids"].contains(key) {
            entry(key, a, b, context: context, id: id)
        }
        kids(a, b, context: context, id: id)
    }

    /// Compares one entry of a field (or its merged widget) that existed.
    private func entry(_ key: String, _ a: qpdf_oh, _ b: qpdf_oh, context: FieldContext, id: Int) {
        let valueA = old.key(a, key)
        let valueB = new.key(b, key)
        let name = context.name ?? "(unnamed)"
        let isSignature = context.type == "/Sig"
        let label =
            "\(isSignature && context.signedBefore ? "signed signature" : "form") field '\(name)' (object \(id))"
        switch key {
        case "/V" where isSignature:
            if old.key(a, key) == nil, let valueB = new.key(b, key) {
                addsSignatureValue = true
                let isTimestamp = new.key(new.dictionary(of: valueB), "/Type").map {
                    new.isName($0, "/DocTimeStamp")
                }
                note(
                    isTimestamp == true ? .ltv : .signatures,
                    [id, number(valueB, in: new)],
                    "signature field '\(name)' was signed",
                    field: name
                )
            } else {
                compare(valueA, valueB, path: "the value of \(label)", kind: .other, holder: id)
            }
        case "/V":
            compare(valueA, valueB, path: "the value of \(label)", kind: .formFields, field: name, holder: id)
        case "/AP", "/AS", "/MK":
            let comparison = PDFAppearanceComparison(old: old, new: new, unchanged: unchanged)
            if let difference = comparison.difference(valueA, valueB) {
                let text = "the appearance (\(key)) of \(label) changed: \(difference.text)"
                note(Self.appearanceKind(context), [id] + difference.objects, text, field: name)
            }
        case "/Lock", "/SV", "/F":
            if isSignature && valueA == nil {
                note(.signatures, [id], "\(label) got \(key)", field: name)
            } else {
                compare(valueA, valueB, path: "\(label) \(key)", kind: .other, holder: id)
            }
        default:
            compare(valueA, valueB, path: "\(label) \(key)", kind: .other, holder: id)
        }
    }

    /// The class of an appearance change: a form fill for other fields (`other` when a signature
    /// locks the field); for a signature field, part of signing it when it is signed in this
    /// revision, `other` once it holds a signature (its signer's widget), and `annotations` for
    /// one that stays unsigned (it shows content no signature accounts for).
    static func appearanceKind(_ context: FieldContext) -> PDFLaterChanges {
        guard context.type == "/Sig" else { return .formFields }
        if context.signedBefore { return .other }
        return context.signedNow ? .signatures : .annotations
    }

    private func kids(_ a: qpdf_oh, _ b: qpdf_oh, context: FieldContext, id: Int) {
        let label = "form field '\(context.name ?? "(unnamed)")' (object \(id))"
        let kidsA = old.key(a, "/Kids").map(old.items) ?? []
        let kidsB = new.key(b, "/Kids").map(new.items) ?? []
        let numbersB = kidsB.map { number($0, in: new) }
        for kid in kidsA {
            let kidID = number(kid, in: old)
            guard kidID != 0, let position = numbersB.firstIndex(of: kidID) else {
                note(.other, [id, kidID], "a kid (\(kidID)) of \(label) was removed")
                continue
            }
            field(kid, kidsB[position], parent: context)
        }
        let numbersA = Set(kidsA.map { number($0, in: old) })
        for (position, kid) in kidsB.enumerated() where !numbersA.contains(numbersB[position]) {
            if context.type == "/Sig" {
                newField(kid, parentName: context.name, formNumber: id)
            } else {
                subtree(kid, into: &newFieldObjects)
                note(.other, [numbersB[position], id], "a new kid was added to \(label)")
            }
        }
    }
}
