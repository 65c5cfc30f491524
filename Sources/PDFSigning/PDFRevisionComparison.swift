internal import CQPDF
import CertificateProviders
import Foundation

/// One difference between a revision and the next, before any policy judges it.
struct PDFRevisionChange: Sendable, Hashable {
    /// Its class: ``PDFLaterChanges/signatures``, `.ltv`, `.formFields`, `.annotations` or `.other`.
    var kind: PDFLaterChanges
    /// The objects involved (numbers, in the newer revision when it has them).
    var objects: [Int]
    /// The change in words.
    var text: String
    /// The full name of the form field whose value or appearance changed (for FieldMDP locks).
    var field: String?
}

/// Compares two revisions of one PDF (each opened by qpdf from its own bytes, so every reference
/// resolves through that revision's cross-reference chain) by walking both from the trailer's
/// `/Root`, and classifies every difference by *where* it is in the graph, never by an object's
/// declared `/Type` or `/Subtype`:
///
/// 1. the page tree, every page and everything it reaches (contents, resources, inherited
///    attributes) except its `/Annots` list: any difference is `other`;
/// 2. the interactive form: a new signature field (its widget and value) is `signatures` (`ltv`
///    for a `/DocTimeStamp` value) when it is only a field and its own widget
///    (``PDFSignatureFieldRule``); `/V`, `/AS`, `/AP`, `/MK` of a field that existed is
///    `formFields` (`signatures` for an unsigned signature field getting signed, `other` for one
///    already signed), appearances compared by content (``PDFAppearanceComparison``); a removed
///    or new non-signature field, a signature value two fields hold, and anything else is `other`;
/// 3. each page's `/Annots`: a removed annotation is `other`; a new or changed one that no form
///    field accounts for is `annotations`;
/// 4. every other catalog entry (`/Names`, `/OpenAction`, `/AA`, `/Outlines`, `/Perms`…) is
///    `other`, but a new `/Perms` is `signatures`;
/// 5. `/DSS`, the XMP `/Metadata`, `/Extensions`, `/MarkInfo`, `/Version` and the trailer's
///    `/Info` are `ltv` (pyHanko's LTA-update level).
///
/// References are followed in both documents at once with a visited set of object pairs (cycles
/// end there) and a budget of compared objects (a hostile file cannot make it run long); an object
/// reached first by a stricter step is judged there. Whatever qpdf warns about while reading
/// either revision (an object it cannot load and takes as null) is an `other` change. A reference that now names another object
/// number, a freed object, or a different type or content is a change.
final class PDFRevisionComparison {
    let old: QPDFDocument
    let new: QPDFDocument
    /// The objects neither revision rewrote, whose walks are replayed without reading them (nil:
    /// every object is read).
    let unchanged: PDFUnchangedObjects?
    private(set) var changes: [PDFRevisionChange] = []
    private var omitted: [Omitted: Int] = [:]
    private var visited = Set<Pair>()
    private var budget: Int
    private var pages: [(old: qpdf_oh, new: qpdf_oh, index: Int)] = []
    /// The notes of the catalog's comparison while they are kept for later ones.
    private var recording: [PDFUnchangedObjects.Note]?
    /// The catalog's comparison, when its graph did not change (kept when qpdf warned about nothing).
    private var catalogComparison: PDFUnchangedObjects.CatalogComparison?
    /// Widgets and fields of the newer form, by what accounts for them.
    var formObjects = Set<Int>()
    var newSignatureObjects = Set<Int>()
    var newFieldObjects = Set<Int>()
    /// Whether this revision added a signature value (a new signed field, or a field signed now).
    var addsSignatureValue = false

    private struct Omitted: Hashable, CustomStringConvertible {
        let kind: PDFLaterChanges
        let field: String?
        var description: String { "\(kind) \(field ?? "")" }
    }

    private struct Pair: Hashable {
        let old: Int
        let new: Int
    }

    static let maximumChanges = 50
    static let defaultBudget = 2_000_000

    init(old: QPDFDocument, new: QPDFDocument, unchanged: PDFUnchangedObjects? = nil, budget: Int = defaultBudget) {
        self.old = old
        self.new = new
        self.unchanged = unchanged
        self.budget = budget
    }

    /// Compares the two documents; the differences are in ``changes``.
    func run() -> [PDFRevisionChange] {
        let oldRoot = old.root
        let newRoot = new.root
        let oldID = old.objectID(oldRoot)
        let newID = new.objectID(newRoot)
        guard oldID == newID, new.isDictionary(newRoot) else {
            note(
                .other,
                [newID.number],
                "the trailer's /Root names another catalog (object \(newID.number), was \(oldID.number)): "
                    + "a different document"
            )
            unchanged?.forgetCatalog()
            return finish()
        }
        visited.insert(Pair(old: oldID.number, new: newID.number))
        // A catalog whose whole graph neither revision rewrote compares as it did last time.
        let catalogWalk = unchanged?.walk(
            from: newID.number,
            generation: newID.generation,
            in: new,
            learning: true,
            isVisited: { _ in false }
        )
        if let catalogWalk, let kept = unchanged?.catalog, kept.root == newID.number {
            for item in kept.notes { note(item.kind, item.objects, item.text, field: item.field) }
            budget -= kept.values
            for object in catalogWalk.objects { visited.insert(Pair(old: object, new: object)) }
        } else {
            let start = budget
            recording = catalogWalk == nil ? nil : []
            compareCatalog(oldRoot, newRoot, holder: newID.number)
            catalogComparison = recording.map { .init(root: newID.number, notes: $0, values: start - budget) }
            recording = nil
            if catalogWalk == nil { unchanged?.forgetCatalog() }
        }
        compare(old.key(old.trailer, "/Info"), new.key(new.trailer, "/Info"), path: "/Info", kind: .ltv)
        return finish()
    }

    /// Steps 1 to 5 but the trailer's `/Info`: everything the catalog reaches.
    private func compareCatalog(_ oldRoot: qpdf_oh, _ newRoot: qpdf_oh, holder: Int) {
        let keys = Set(old.keys(oldRoot) + new.keys(newRoot))
        let lenient: Set<String> = ["/DSS", "/Metadata", "/Extensions", "/MarkInfo", "/Version"]
        /// Compares one entry of the catalog.
        func compareCatalog(_ key: String, kind: PDFLaterChanges) {
            compare(
                old.key(oldRoot, key),
                new.key(newRoot, key),
                path: "the catalog's \(key)",
                kind: kind,
                holder: holder
            )
        }
        // 1. The page tree.
        pageTree(old.key(oldRoot, "/Pages"), new.key(newRoot, "/Pages"), depth: 0)
        // 2. The form; 3. the pages' annotations.
        form(old.key(oldRoot, "/AcroForm"), new.key(newRoot, "/AcroForm"))
        annotations()
        // 4. Everything else in the catalog.
        for key in keys.sorted() where key != "/Pages" && key != "/AcroForm" && !lenient.contains(key) {
            if key == "/Perms", old.key(oldRoot, key) == nil {
                note(.signatures, [holder], "the catalog's /Perms was added (a certification signature)")
                continue
            }
            compareCatalog(key, kind: .other)
        }
        // 5. Validation data and metadata.
        for key in lenient.sorted() { compareCatalog(key, kind: .ltv) }
    }

    private func finish() -> [PDFRevisionChange] {
        unreadable()
        // What was left out, one line per class (and field: a locked field's fill stays visible).
        for (key, count) in omitted.sorted(by: { "\($0.key)" < "\($1.key)" }) {
            let what = key.field.map { " of form field '\($0)'" } ?? ""
            changes.append(
                PDFRevisionChange(
                    kind: key.kind,
                    objects: [],
                    text: "\(count) more differences\(what)",
                    field: key.field
                )
            )
        }
        return changes
    }

    /// What qpdf could not read while the two revisions were compared (an object at a broken
    /// offset, a structure nested too deep): qpdf reads it as null where a repairing reader may
    /// show something, so each is a change of class `other`, never an absent object.
    private func unreadable() {
        var clean = true
        // In a fixed order: the objects kept from earlier revisions are read in another order.
        for document in [old, new] {
            for warning in document.takeWarnings().sorted() {
                clean = false
                note(.other, [], "qpdf cannot read all of a compared revision: \(Self.short(warning, 240))")
            }
        }
        unchanged?.finish(clean: clean, catalog: catalogComparison)
    }

    func note(_ kind: PDFLaterChanges, _ objects: [Int], _ text: String, field: String? = nil) {
        recording?.append(.init(kind: kind, objects: objects, text: text, field: field))
        guard changes.count < Self.maximumChanges else {
            omitted[Omitted(kind: kind, field: field), default: 0] += 1
            return
        }
        let change = PDFRevisionChange(kind: kind, objects: objects.filter { $0 > 0 }, text: text, field: field)
        if !changes.contains(change) { changes.append(change) }
    }

    /// Whether the pair was seen (and marks it); direct objects are never "seen".
    func firstVisit(_ a: qpdf_oh?, _ b: qpdf_oh?) -> Bool {
        guard let a, let b, old.isIndirect(a), new.isIndirect(b) else { return true }
        return visited.insert(Pair(old: old.objectID(a).number, new: new.objectID(b).number)).inserted
    }

    func number(_ object: qpdf_oh?, in document: QPDFDocument) -> Int {
        guard let object, document.isIndirect(object) else { return 0 }
        return document.objectID(object).number
    }

    // MARK: The generic comparison

    /// One pair still to compare: the older and newer object, the path that reached them and the
    /// object holding them.
    private typealias Pending = (old: qpdf_oh?, new: qpdf_oh?, path: String, holder: Int)

    /// Compares `a` (older) with `b` (newer) and everything they reach; each difference is noted
    /// as `kind`.
    func compare(
        _ a: qpdf_oh?,
        _ b: qpdf_oh?,
        path: String,
        kind: PDFLaterChanges,
        field: String? = nil,
        holder: Int = 0
    ) {
        var stack: [Pending] = [(a, b, path, number(b, in: new) != 0 ? number(b, in: new) : holder)]
        let label = path
        while let (a, b, longPath, holder) = stack.popLast() {
            budget -= 1
            guard budget > 0 else {
                if budget == 0 {
                    note(.other, [], "the document is too large to compare (more objects than the limit)")
                }
                return
            }
            let numberA = number(a, in: old)
            let numberB = number(b, in: new)
            if numberA == numberB, numberB != 0, let a, let b {
                // Seen already (as firstVisit would say), or the same in both: neither is read.
                if visited.contains(Pair(old: numberA, new: numberB)) || replayUnchanged(a, b, number: numberB) {
                    continue
                }
            }
            let typeA = a.map(old.typeCode) ?? ot_null
            let typeB = b.map(new.typeCode) ?? ot_null
            if numberA != numberB {
                let what = Self.referenceChange(numberA, numberB, isNull: b == nil || typeB == ot_null)
                note(kind, [numberB, holder, numberA], "\(Self.short(longPath, 160)) \(what)", field: field)
                continue
            }
            guard firstVisit(a, b) else { continue }
            let objectHolder = numberB != 0 ? numberB : holder
            // A long path (a chain of references) is cut to the object it reached.
            let path = numberB != 0 && longPath.utf8.count > 100 ? "\(label) … object \(numberB)" : longPath
            guard typeA == typeB else {
                let what = typeB == ot_null ? "was removed or freed" : typeA == ot_null ? "was added" : "changed type"
                note(kind, [objectHolder], "\(path) \(what)", field: field)
                continue
            }
            guard let a, let b else { continue }
            let pending = Pending(a, b, path, objectHolder)
            stack += children(of: pending, type: typeB, kind: kind, field: field).reversed()
        }
    }

    /// Whether the walk from object `number` (reached by references `a` and `b` of one generation,
    /// not visited yet) reaches only objects neither revision rewrote: then it finds no difference,
    /// and it is replayed (its objects visited, its values taken from the budget) without reading them.
    private func replayUnchanged(_ a: qpdf_oh, _ b: qpdf_oh, number: Int) -> Bool {
        let generation = new.objectID(b).generation
        guard let unchanged, old.objectID(a).generation == generation,
            let walk = unchanged.walk(
                from: number,
                generation: generation,
                in: new,
                isVisited: { self.visited.contains(Pair(old: $0, new: $0)) }
            ), budget - walk.values > 0
        else { return false }
        budget -= walk.values
        for object in walk.objects { visited.insert(Pair(old: object, new: object)) }
        return true
    }

    /// Notes how `pair` itself differs (an array's length, a stream's data, a scalar's value) and
    /// returns the pairs of what it holds, compared next. Stream data qpdf cannot read is a change
    /// of class `other` (never "the same" because both reads failed).
    private func children(
        of pair: Pending,
        type: qpdf_object_type_e,
        kind: PDFLaterChanges,
        field: String?
    ) -> [Pending] {
        guard let a = pair.old, let b = pair.new else { return [] }
        let (path, holder) = (pair.path, pair.holder)
        switch type {
        case ot_array:
            let itemsA = old.items(a)
            let itemsB = new.items(b)
            guard itemsA.count == itemsB.count else {
                note(kind, [holder], "\(path) has \(itemsB.count) items (was \(itemsA.count))", field: field)
                return []
            }
            return itemsA.indices.map { (itemsA[$0], itemsB[$0], "\(path)[\($0)]", holder) }
        case ot_dictionary, ot_stream:
            let dictionaryA = old.dictionary(of: a)
            let dictionaryB = new.dictionary(of: b)
            if type == ot_stream {
                let (dataA, dataB) = (old.streamData(a), new.streamData(b))
                if dataA == nil || dataB == nil {
                    note(.other, [holder], "qpdf cannot read the data of stream \(path)", field: field)
                } else if dataA != dataB {
                    note(kind, [holder], "the data of stream \(path) changed", field: field)
                }
            }
            let keys = Set(old.keys(dictionaryA) + new.keys(dictionaryB)).sorted()
            return keys.map { (old.key(dictionaryA, $0), new.key(dictionaryB, $0), "\(path) \($0)", holder) }
        default:
            // Strings (a signature's /Contents) compared by their bytes, without writing them out.
            if type == ot_string, let bytesA = old.bytes(a), bytesA == new.bytes(b) { return [] }
            if old.unparse(a) != new.unparse(b) {
                let what = "changed from \(Self.short(old.unparse(a))) to \(Self.short(new.unparse(b)))"
                note(kind, [holder], "\(path) \(what)", field: field)
            }
            return []
        }
    }

    /// A reference that names another object now, in words.
    private static func referenceChange(_ numberA: Int, _ numberB: Int, isNull: Bool) -> String {
        if numberB == 0 {
            return isNull
                ? "no longer refers to object \(numberA) (missing or freed now)"
                : "is no longer a reference (was object \(numberA))"
        }
        if isNull { return "refers to object \(numberB), which is missing or freed" }
        return "refers to object \(numberB) instead of \(numberA == 0 ? "a direct value" : "object \(numberA)")"
    }

    static func short(_ text: String, _ limit: Int = 48) -> String {
        text.count <= limit ? text : text.prefix(limit - 3) + "..."
    }

    // MARK: Pages

    private func pageTree(_ a: qpdf_oh?, _ b: qpdf_oh?, depth: Int) {
        let label = pages.isEmpty && depth == 0 ? "the page tree" : "page tree node \(number(b, in: new))"
        guard let a, let b, old.isDictionary(a), new.isDictionary(b), depth < 64,
            number(a, in: old) == number(b, in: new)
        else {
            compare(a, b, path: label, kind: .other)
            return
        }
        guard firstVisit(a, b) else { return }
        let kidsA = old.key(a, "/Kids")
        let kidsB = new.key(b, "/Kids")
        let isLeaf = kidsA == nil && kidsB == nil
        let name = isLeaf ? "page \(pages.count + 1) (object \(number(b, in: new)))" : label
        let node = number(b, in: new)
        for key in Set(old.keys(a) + new.keys(b)).sorted() where !["/Kids", "/Annots", "/Parent"].contains(key) {
            compare(old.key(a, key), new.key(b, key), path: "\(name) \(key)", kind: .other, holder: node)
        }
        compare(old.key(a, "/Parent"), new.key(b, "/Parent"), path: "\(name) /Parent", kind: .other, holder: node)
        if isLeaf {
            pages.append((a, b, pages.count + 1))
            return
        }
        if let kidsA, let kidsB, old.typeCode(kidsA) == ot_array, new.typeCode(kidsB) == ot_array {
            let itemsA = old.items(kidsA)
            let itemsB = new.items(kidsB)
            guard itemsA.count == itemsB.count else {
                note(.other, [number(b, in: new)], "\(name) has \(itemsB.count) kids (was \(itemsA.count))")
                return
            }
            for (kidA, kidB) in zip(itemsA, itemsB) { pageTree(kidA, kidB, depth: depth + 1) }
        } else {
            compare(kidsA, kidsB, path: "\(name) /Kids", kind: .other)
        }
    }

    // MARK: Annotations

    private func annotations() {
        for (a, b, index) in pages {
            let listA = old.key(a, "/Annots").map(old.items) ?? []
            let listB = new.key(b, "/Annots").map(new.items) ?? []
            let page = "page \(index)"
            let numbersB = listB.map { number($0, in: new) }
            for (position, annotation) in listA.enumerated() {
                let id = number(annotation, in: old)
                if id == 0 {
                    let other = position < listB.count ? listB[position] : nil
                    compare(annotation, other, path: "annotation \(position) of \(page)", kind: .annotations)
                } else if !numbersB.contains(id) {
                    note(.other, [number(b, in: new), id], "annotation \(id) was removed from \(page)")
                } else if !formObjects.contains(id) {
                    let other = listB[numbersB.firstIndex(of: id)!]
                    compare(annotation, other, path: "annotation \(id) on \(page)", kind: .annotations)
                }
            }
            let numbersA = Set(listA.map { number($0, in: old) })
            for (position, annotation) in listB.enumerated() {
                let id = numbersB[position]
                guard id == 0 ? position >= listA.count : !numbersA.contains(id) else { continue }
                if newSignatureObjects.contains(id) || newFieldObjects.contains(id) { continue }
                if formObjects.contains(id) {
                    note(.other, [id], "a widget of an existing form field was added to \(page) (object \(id))")
                    continue
                }
                let subtype = new.key(new.dictionary(of: annotation), "/Subtype").map(new.unparse) ?? "no /Subtype"
                note(.annotations, [id, number(b, in: new)], "a new annotation (\(subtype)) on \(page)")
            }
        }
    }
}
