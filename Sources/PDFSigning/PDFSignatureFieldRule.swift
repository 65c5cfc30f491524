internal import CQPDF

/// What a signature field added after a signature may carry, and that one signature value
/// serves one field.
///
/// A new signature field counts as a signature (``PDFLaterChanges/signatures``) only when it is
/// what signing adds: the field and its own widget. So:
/// - an action on it or its widget (`/A`, `/AA`: JavaScript, a URI) is `other`;
/// - a kid other than its one own widget (a `/Link`, a `/FreeText`, a second widget) is `other`;
/// - a field merged with an annotation that is not a widget (`/Subtype /FreeText`) is
///   `annotations`;
/// - an unsigned one showing anything (an appearance stream with content on a widget of non-zero
///   size) is `annotations`: until signed, it is content no signature accounts for.
///
/// A signature value (its `/Contents`) that a second field holds too shows one signature twice,
/// in a field its signer never signed: `other`.
struct PDFSignatureFieldRule {
    /// The newer revision, which holds the new field.
    let document: QPDFDocument

    /// One thing a new signature field carries that signing does not add.
    struct Finding {
        let kind: PDFLaterChanges
        let objects: [Int]
        let text: String
    }

    /// What the new signature field `field` (full name `name`) carries beyond a signature field
    /// and its own widget; `isSigned`: it holds a value (`/V`).
    func check(newField field: qpdf_oh, name: String, isSigned: Bool) -> [Finding] {
        var findings: [Finding] = []
        let id = number(field)
        let kids = document.key(field, "/Kids").map(document.items) ?? []
        let label = "the new \(isSigned ? "" : "unsigned ")signature field '\(name)' (object \(id))"
        var widgets: [qpdf_oh] = []
        if document.key(field, "/Subtype") != nil || document.key(field, "/Rect") != nil { widgets.append(field) }
        for kid in kids {
            if kids.count == 1, isOwnWidget(kid) {
                widgets.append(kid)
            } else {
                let subtype = document.key(kid, "/Subtype").map(document.unparse) ?? "no /Subtype"
                findings.append(
                    Finding(
                        kind: .other,
                        objects: [number(kid), id],
                        text: "\(label) has a kid (\(subtype)) that is not its own widget"
                    )
                )
            }
        }
        for object in [field] + kids {
            for key in ["/A", "/AA"] where document.key(object, key) != nil {
                findings.append(
                    Finding(kind: .other, objects: [number(object), id], text: "\(label) carries an action (\(key))")
                )
            }
        }
        for widget in widgets {
            if let subtype = document.key(widget, "/Subtype"), !document.isName(subtype, "/Widget") {
                let text = "\(label) is also a \(document.unparse(subtype)) annotation"
                findings.append(Finding(kind: .annotations, objects: [number(widget), id], text: text))
            }
            if !isSigned, let shown = shownAppearance(widget) {
                let text = "\(label) shows an appearance (object \(shown)) though no signature fills it"
                findings.append(Finding(kind: .annotations, objects: [number(widget), shown, id], text: text))
            }
        }
        return findings
    }

    /// A kid that is the field's own widget: a widget annotation, not a field (no `/T`, `/FT`,
    /// `/Kids`).
    private func isOwnWidget(_ kid: qpdf_oh) -> Bool {
        guard document.isDictionary(kid), let subtype = document.key(kid, "/Subtype"),
            document.isName(subtype, "/Widget")
        else { return false }
        return ["/T", "/FT", "/Kids"].allSatisfy { document.key(kid, $0) == nil }
    }

    /// The number of an appearance stream (`/AP` `/N`, `/R`, `/D`, or one of their states) of a
    /// widget of non-zero size that draws something (or that qpdf cannot decode); nil when the
    /// widget shows nothing. 0 for a direct stream.
    private func shownAppearance(_ widget: qpdf_oh) -> Int? {
        let rect = (document.key(widget, "/Rect").map(document.items) ?? []).compactMap(document.real)
        guard rect.count == 4, rect[0] != rect[2], rect[1] != rect[3],
            let appearance = document.key(widget, "/AP")
        else { return nil }
        var streams: [qpdf_oh] = []
        for key in ["/N", "/R", "/D"] {
            guard let value = document.key(appearance, key) else { continue }
            if document.isStream(value) {
                streams.append(value)
            } else {
                streams += document.keys(value).compactMap { document.key(value, $0) }.filter(document.isStream)
            }
        }
        for stream in streams {
            guard let data = document.streamData(stream, decoded: true), data.allSatisfy(PDFBytes.isWhitespace) else {
                return number(stream)
            }
        }
        return nil
    }

    private func number(_ object: qpdf_oh) -> Int {
        document.isIndirect(object) ? document.objectID(object).number : 0
    }

    /// Signature values that more fields of `new` hold than of `old` (the same `/Contents`): each
    /// shows one signature in a field its signer did not sign.
    static func reusedValues(old: QPDFDocument, new: QPDFDocument) -> [Finding] {
        let before = holders(in: old)
        var findings: [Finding] = []
        for (contents, fields) in holders(in: new) where fields.count > 1 {
            let names = fields.map(\.name)
            guard before[contents].map({ $0.map(\.name) }) != names else { continue }
            let list = names.map { "'\($0)'" }.joined(separator: ", ")
            findings.append(
                Finding(
                    kind: .other,
                    objects: fields.map(\.value),
                    text: "one signature value serves the signature fields \(list): "
                        + "a signature shown in a field its signer did not sign"
                )
            )
        }
        return findings.sorted { $0.text < $1.text }
    }

    /// The signature fields holding each signature value (by `/Contents`), with the value's
    /// object number (0 when direct).
    private static func holders(in document: QPDFDocument) -> [[UInt8]: [(name: String, value: Int)]] {
        var holders: [[UInt8]: [(name: String, value: Int)]] = [:]
        for field in PDFFields(document: document).all where field.isSignature {
            guard let value = document.key(field.handle, "/V"),
                let contents = document.key(document.dictionary(of: value), "/Contents").flatMap(document.bytes),
                !contents.isEmpty
            else { continue }
            let number = document.isIndirect(value) ? document.objectID(value).number : 0
            holders[contents, default: []].append((field.name, number))
        }
        return holders
    }
}
