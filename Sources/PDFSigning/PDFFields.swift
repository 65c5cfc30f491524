import Foundation

/// The form fields of a document, terminal ones with their full names (`parent.child`).
struct PDFFields {
    struct Field {
        let name: String
        let handle: UInt32
        let isSignature: Bool
    }

    let all: [Field]

    init(document: QPDFDocument) {
        var found: [Field] = []
        func walk(_ handle: UInt32, prefix: String, inheritedType: Bool, depth: Int) {
            guard depth < 32, document.isDictionary(handle) else { return }
            let partial = document.key(handle, "/T").flatMap(document.text)
            let name = [prefix, partial ?? ""].filter { !$0.isEmpty }.joined(separator: ".")
            let type = document.key(handle, "/FT")
            let isSignature = type.map { document.isName($0, "/Sig") } ?? inheritedType
            let kids = document.key(handle, "/Kids").map(document.items) ?? []
            let namedKids = kids.filter { document.key($0, "/T") != nil }
            if namedKids.isEmpty {
                if partial != nil || !prefix.isEmpty {
                    found.append(Field(name: name, handle: handle, isSignature: isSignature))
                }
            } else {
                for kid in namedKids { walk(kid, prefix: name, inheritedType: isSignature, depth: depth + 1) }
            }
        }
        if let form = document.key(document.root, "/AcroForm"), let fields = document.key(form, "/Fields") {
            for field in document.items(fields) { walk(field, prefix: "", inheritedType: false, depth: 0) }
        }
        all = found
    }
}
