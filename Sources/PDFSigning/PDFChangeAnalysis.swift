import CertificateProviders
import Foundation

/// What the revisions after a signed one change, object by object: the objects a later revision
/// (re)defines are compared between the signed revision (opened by qpdf from its bytes) and the
/// whole file, and each change is judged as a signature, a form fill, or something else.
///
/// Judged as signatures: new signature dictionaries and signature fields; a page whose only change
/// is new annotations; the catalog's `/AcroForm`, `/DSS`, `/Extensions`, `/Metadata` (XMP) and
/// `/Version` (as pyHanko's writer updates them when it signs) and the XMP stream; the form's field
/// list, `/SigFlags`, `/NeedAppearances`, `/DR`, `/DA`; a signature field getting its value or
/// appearance. Judged as form fills: a non-signature field's `/V`, `/AS`, `/AP`, `/MK` and changed
/// appearance streams. Ignored: cross-reference and object streams, `/Info`'s `/ModDate` and
/// `/Producer`, new objects nothing changed refers to (appearances, validation data). Anything
/// else (page content, resources, a new non-signature field, a removed annotation…) is another
/// change.
struct PDFChangeAnalysis {
    /// The worst change found and, for another change, the first one in words.
    let kind: PDFLaterChanges
    let detail: String?

    private enum Level: Int, Comparable {
        case signature, formFill, other
        static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Compares the signed revision (`signedBytes`, the file up to its `%%EOF`) with the whole
    /// file `document`; `tail` is the file after the signed revision.
    static func analyse(signedBytes: [UInt8], tail: [UInt8], document: QPDFDocument) throws -> PDFChangeAnalysis {
        let before = try QPDFDocument(bytes: signedBytes, description: "\(document.path) (signed revision)")
        var level = Level.signature
        var detail: String?
        func note(_ found: Level, _ text: String) {
            if found > level || (found == level && detail == nil && found == .other) {
                level = found
                detail = text
            }
        }
        let rootID = document.objectID(document.root)
        let infoID = document.key(document.trailer, "/Info").map(document.objectID)
        for (number, generation) in candidates(in: tail, document: document) {
            let label = "object \(number) \(generation)"
            guard let after = document.object(number: number, generation: generation) else {
                if before.object(number: number, generation: generation) != nil {
                    note(.other, "\(label) was removed")
                }
                continue
            }
            let afterDictionary = document.dictionary(of: after)
            let type = document.key(afterDictionary, "/Type").map(document.unparse)
            if type == "/XRef" || type == "/ObjStm" { continue }
            guard let old = before.object(number: number, generation: generation) else {
                // A new object: judged by what it is; other new objects matter only through the
                // changed objects that refer to them.
                if type == "/Sig" || type == "/DocTimeStamp" || document.key(afterDictionary, "/ByteRange") != nil {
                    note(.signature, label)
                } else if let fieldType = document.key(afterDictionary, "/FT").map(document.unparse),
                    fieldType != "/Sig"
                {
                    note(.other, "a new \(fieldType.dropFirst()) form field (\(label)) was added")
                }
                continue
            }
            let oldDictionary = before.dictionary(of: old)
            // Values as written (`4 0 R` for a reference): a changed referenced object is itself a
            // candidate and judged on its own.
            let changedKeys = Set(document.keys(afterDictionary) + before.keys(oldDictionary)).filter { key in
                let new = document.key(afterDictionary, key).map(document.unparse)
                let previous = before.key(oldDictionary, key).map(before.unparse)
                return new != previous
            }
            let dataChanged =
                document.isStream(after) != before.isStream(old)
                || (document.isStream(after) && document.streamData(after) != before.streamData(old))
            if changedKeys.isEmpty && !dataChanged { continue }
            let keys = changedKeys.sorted().joined(separator: " ")
            if dataChanged || document.isStream(after) {
                let subtype = document.key(afterDictionary, "/Subtype").map(document.unparse)
                if type == "/Metadata" {
                    note(.signature, label)
                } else if subtype == "/Form" {
                    note(.formFill, label)
                } else {
                    note(.other, "the content of stream \(label) changed")
                }
                continue
            }
            if (number, generation) == (rootID.number, rootID.generation) {
                if changedKeys.isSubset(of: ["/AcroForm", "/DSS", "/Extensions", "/Metadata", "/Version"]) {
                    note(.signature, label)
                } else {
                    note(.other, "the document catalog changed (\(keys))")
                }
            } else if let infoID, (number, generation) == (infoID.number, infoID.generation) {
                if !changedKeys.isSubset(of: ["/ModDate", "/Producer"]) {
                    note(.other, "the document information changed (\(keys))")
                }
            } else if type == "/Page" {
                let oldAnnotations = Set(
                    (before.key(oldDictionary, "/Annots").map(before.items) ?? []).map(before.unparse)
                )
                let newAnnotations = Set(
                    (document.key(afterDictionary, "/Annots").map(document.items) ?? []).map(document.unparse)
                )
                if changedKeys == ["/Annots"], oldAnnotations.isSubset(of: newAnnotations) {
                    note(.signature, label)
                } else {
                    note(.other, "page \(label) changed (\(keys))")
                }
            } else if let fieldType = fieldType(afterDictionary, in: document) {
                if fieldType == "/Sig" {
                    if changedKeys.isSubset(of: ["/V", "/AP", "/AS", "/Lock", "/SV", "/F", "/MK"]) {
                        note(.signature, label)
                    } else {
                        note(.other, "signature field \(label) changed (\(keys))")
                    }
                } else if changedKeys.isSubset(of: ["/V", "/AS", "/AP", "/MK"]) {
                    note(.formFill, label)
                } else {
                    note(.other, "form field \(label) changed (\(keys))")
                }
            } else if isForm(oldDictionary, before) {
                if changedKeys.isSubset(of: ["/Fields", "/SigFlags", "/NeedAppearances", "/DR", "/DA"]) {
                    note(.signature, label)
                } else {
                    note(.other, "the interactive form changed (\(keys))")
                }
            } else {
                note(.other, "\(label) changed (\(keys))")
            }
        }
        switch level {
        case .signature: return PDFChangeAnalysis(kind: .signatures, detail: nil)
        case .formFill: return PDFChangeAnalysis(kind: .formFields, detail: nil)
        case .other: return PDFChangeAnalysis(kind: .other, detail: detail)
        }
    }

    /// The objects the later revisions define: every `N G obj` in `tail` (a false match in stream
    /// data compares equal and costs nothing), and the members of object streams among them.
    private static func candidates(in tail: [UInt8], document: QPDFDocument) -> [(Int, Int)] {
        var found: [(Int, Int)] = []
        var seen = Set<Int>()
        let obj = Array("obj".utf8)
        var index = 0
        while let at = PDFBytes.firstIndex(of: obj, in: tail, from: index) {
            index = at + 3
            // Walk back over "G", whitespace, "N", whitespace.
            var cursor = at - 1
            func number() -> Int? {
                while cursor >= 0, PDFBytes.isWhitespace(tail[cursor]) { cursor -= 1 }
                let end = cursor + 1
                while cursor >= 0, (0x30...0x39).contains(tail[cursor]) { cursor -= 1 }
                guard end > cursor + 1, end - cursor - 1 <= 10 else { return nil }
                return Int(String(decoding: tail[(cursor + 1)..<end], as: UTF8.self))
            }
            guard let generation = number(), let objectNumber = number(), objectNumber > 0 else { continue }
            guard seen.insert(objectNumber).inserted else { continue }
            found.append((objectNumber, generation))
            // Objects stored inside a new object stream: its header lists "number offset" pairs.
            if let stream = document.object(number: objectNumber, generation: generation), document.isStream(stream) {
                let dictionary = document.dictionary(of: stream)
                guard document.key(dictionary, "/Type").map({ document.isName($0, "/ObjStm") }) == true,
                    let count = document.key(dictionary, "/N").flatMap(document.integer),
                    let first = document.key(dictionary, "/First").flatMap(document.integer),
                    let data = document.streamData(stream, decoded: true)
                else { continue }
                // Split on bytes: any PDF whitespace separates the pairs (as a String, "\r\n" would be
                // one Character, and a change hidden behind it would go unseen).
                let numbers = data.prefix(Int(first)).split(whereSeparator: PDFBytes.isWhitespace).map {
                    $0.count <= 10 && $0.allSatisfy { (0x30...0x39).contains($0) }
                        ? Int(String(decoding: $0, as: UTF8.self)) : nil
                }
                for pair in stride(from: 0, to: min(numbers.count, Int(count) * 2), by: 2) {
                    guard let member = numbers[pair], seen.insert(member).inserted else { continue }
                    found.append((member, 0))
                }
            }
        }
        return found
    }

    /// A field's type (`/FT`, inherited through `/Parent`), or nil for an object that is not a
    /// form field or widget.
    private static func fieldType(_ dictionary: UInt32, in document: QPDFDocument) -> String? {
        let isWidget = document.key(dictionary, "/Subtype").map { document.isName($0, "/Widget") } ?? false
        guard isWidget || document.key(dictionary, "/FT") != nil || document.key(dictionary, "/T") != nil else {
            return nil
        }
        var current: UInt32? = dictionary
        for _ in 0..<32 {
            guard let handle = current else { break }
            if let type = document.key(handle, "/FT") { return document.unparse(type) }
            current = document.key(handle, "/Parent")
        }
        return "/unknown"
    }

    /// Whether `dictionary` is the catalog's `/AcroForm` of `document`.
    private static func isForm(_ dictionary: UInt32, _ document: QPDFDocument) -> Bool {
        guard let form = document.key(document.root, "/AcroForm"), document.isIndirect(form) else { return false }
        return document.objectID(form) == document.objectID(dictionary)
    }
}
