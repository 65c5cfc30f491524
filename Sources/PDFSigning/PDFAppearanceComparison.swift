internal import CQPDF

/// Compares two versions of an appearance (a field's or widget's `/AP`, `/AS` or `/MK`) by
/// content: every object it reaches, streams by their raw data and dictionary, so an update that
/// only redefines an appearance stream object under its old number is seen. A reference that now
/// names another object number is a difference too, as in ``PDFRevisionComparison``.
///
/// It keeps its own visited set (pairs of object numbers, so cycles end) and budget: an object
/// the comparison of the revisions reached earlier on a more lenient path is still compared
/// here, so the appearance change gets the field's class.
struct PDFAppearanceComparison {
    let old: QPDFDocument
    let new: QPDFDocument
    /// The objects neither revision rewrote (see ``PDFRevisionComparison/unchanged``).
    var unchanged: PDFUnchangedObjects?
    /// The most objects compared; a larger appearance counts as changed.
    var budget = 100_000

    /// A difference: the objects involved and what differs, in words.
    struct Difference {
        let objects: [Int]
        let text: String
    }

    private struct Pair: Hashable {
        let old: Int
        let new: Int
    }

    /// The first difference between `a` (older) and `b` (newer), nil when they are the same.
    func difference(_ a: qpdf_oh?, _ b: qpdf_oh?) -> Difference? {
        var stack: [(qpdf_oh?, qpdf_oh?)] = [(a, b)]
        var visited = Set<Pair>()
        var remaining = budget
        while let (a, b) = stack.popLast() {
            remaining -= 1
            guard remaining > 0 else { return Difference(objects: [], text: "it is too large to compare") }
            let numberA = number(a, in: old)
            let numberB = number(b, in: new)
            guard numberA == numberB else {
                let was = numberA == 0 ? "a direct value" : "object \(numberA)"
                return Difference(objects: [numberB], text: "it refers to object \(numberB) instead of \(was)")
            }
            if numberB != 0, !visited.contains(Pair(old: numberA, new: numberB)), let unchanged, let a, let b,
                old.objectID(a).generation == new.objectID(b).generation,
                let walk = unchanged.walk(
                    from: numberB,
                    generation: new.objectID(b).generation,
                    in: new,
                    isVisited: { visited.contains(Pair(old: $0, new: $0)) }
                ), remaining - walk.values > 0
            {
                // Nothing it reaches was rewritten: the same in both, replayed without reading.
                remaining -= walk.values
                for object in walk.objects { visited.insert(Pair(old: object, new: object)) }
                continue
            }
            if numberB != 0, !visited.insert(Pair(old: numberA, new: numberB)).inserted { continue }
            let place = numberB == 0 ? "a direct object" : "object \(numberB)"
            let typeA = a.map(old.typeCode) ?? ot_null
            let typeB = b.map(new.typeCode) ?? ot_null
            guard typeA == typeB else {
                return Difference(objects: [numberB], text: "\(place) was added, removed or changed type")
            }
            guard let a, let b else { continue }
            switch typeB {
            case ot_array:
                let itemsA = old.items(a)
                let itemsB = new.items(b)
                guard itemsA.count == itemsB.count else {
                    return Difference(objects: [numberB], text: "an array in \(place) changed length")
                }
                stack += zip(itemsA, itemsB).map { ($0, $1) }
            case ot_dictionary, ot_stream:
                if typeB == ot_stream {
                    let dataA = old.streamData(a)
                    guard let dataA, dataA == new.streamData(b) else {
                        return Difference(objects: [numberB], text: "the data of stream \(place) differs")
                    }
                }
                let dictionaryA = old.dictionary(of: a)
                let dictionaryB = new.dictionary(of: b)
                for key in Set(old.keys(dictionaryA) + new.keys(dictionaryB)) {
                    stack.append((old.key(dictionaryA, key), new.key(dictionaryB, key)))
                }
            default:
                guard old.unparse(a) == new.unparse(b) else {
                    return Difference(objects: [numberB], text: "a value in \(place) changed")
                }
            }
        }
        return nil
    }

    private func number(_ object: qpdf_oh?, in document: QPDFDocument) -> Int {
        guard let object, document.isIndirect(object) else { return 0 }
        return document.objectID(object).number
    }
}
