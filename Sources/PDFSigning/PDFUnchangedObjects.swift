internal import CQPDF

/// The objects a revision did not rewrite, so a comparison of two revisions need not read them
/// again: an object whose cross-reference entry is the same in both revisions stands at the same
/// bytes of the file in both, so qpdf reads the same object from each, and when everything a walk
/// from it reaches is such an object too, the walk would find no difference. What a walk needs of
/// an object (its references and how many values it holds) is kept from the comparison that first
/// read it, so later comparisons replay the walk without qpdf: same budget, same visited objects.
///
/// Kept only from a comparison during which qpdf warned about nothing (an object it warned about
/// is read, and warned about, in every revision), and used from the comparison after: an object
/// read cleanly at an entry reads cleanly from the same bytes. When the catalog's whole graph is
/// unchanged, its comparison (which then depends on that graph alone) is kept too and repeated
/// without walking it. What qpdf reads also depends on
/// other objects in two cases, both covered: a stream whose `/Length` is a reference (never
/// kept), and an object in an object stream (kept with that stream's entry, whose dictionary must
/// hold no reference). A stream whose data qpdf cannot give, or a reference whose generation is
/// not the entry's, is never kept: those are always read and compared.
///
/// One instance serves one chain of revisions read in increasing order from
/// ``PDFRevisionBuffers`` (whose merged entries are what qpdf reads): ``advance(changes:)`` with
/// each revision's changed entries when it is opened, ``finish(clean:catalog:)`` after each
/// comparison.
final class PDFUnchangedObjects {
    typealias Entry = PDFXRefSection.Entry

    /// What a walk needs of one object read at one entry.
    private struct Record {
        var entry: Entry
        /// The object stream holding it, with that stream's entry.
        var container: (number: Int, entry: Entry)?
        /// The references among its values, in no particular order (repeats kept).
        var references: [(number: Int, generation: Int)]
        /// How many values a walk of it takes from the stack: every value it holds directly,
        /// nested ones included, a reference counting one.
        var values: Int
    }

    /// A replayed walk: the objects it visits and the values it takes.
    struct Walk {
        var objects: [Int]
        var values: Int
    }

    /// One difference a comparison noted, as it noted it.
    struct Note {
        var kind: PDFLaterChanges
        var objects: [Int]
        var text: String
        var field: String?
    }

    /// What comparing the catalog's graph gave when none of it changed: the same in every later
    /// comparison while none of it changes (it depends on nothing else).
    struct CatalogComparison {
        var root: Int
        var notes: [Note]
        var values: Int
    }

    private var entries: [Entry]
    private var changed = Set<Int>()
    private var records: [Int: Record] = [:]
    /// Records read during the current comparison, kept when it ends without a warning.
    private var fresh: [Int: Record] = [:]
    /// Objects whose walk cannot be replayed in the current comparison.
    private var failed = Set<Int>()
    /// The catalog's comparison, while its graph has not changed since.
    private(set) var catalog: CatalogComparison?
    /// Whether the revision opened last was compared with the one before.
    private var compared = false
    /// The most objects kept (a larger graph is compared by reading it, as without reuse).
    static let maximumRecords = 1_000_000

    /// An empty set for object numbers up to `highest`.
    init(highest: Int) {
        entries = [Entry](repeating: .free, count: highest + 1)
    }

    /// Moves on to the next revision: `changes` are the entries it changed.
    func advance(changes: [(number: Int, entry: Entry)]) {
        changed = Set(changes.map(\.number))
        for (number, entry) in changes where number < entries.count { entries[number] = entry }
        fresh = [:]
        failed = []
        // A revision left uncompared may have changed the catalog's graph unseen.
        if !compared { catalog = nil }
        compared = false
    }

    /// Ends a comparison: what it read is kept when qpdf warned about nothing in either revision,
    /// and so is `catalog` (the comparison of a catalog graph that did not change), when given.
    func finish(clean: Bool, catalog: CatalogComparison?) {
        compared = true
        if clean {
            for (number, record) in fresh where records.count < Self.maximumRecords || records[number] != nil {
                records[number] = record
            }
            if let catalog { self.catalog = catalog }
        } else {
            self.catalog = nil
        }
        fresh = [:]
        failed = []
    }

    /// Forgets the catalog's comparison (its graph changed).
    func forgetCatalog() { catalog = nil }

    /// The walk from object `number` (generation `generation`) of `document` (the newer
    /// revision) when every object it reaches through objects not `isVisited` is unchanged since
    /// the revision before and kept; nil otherwise (the caller then compares by reading). An
    /// unchanged object not kept yet is read now, kept by ``finish(clean:catalog:)``: the first
    /// one the walk meets, or with `learning` every one it reaches (the catalog's walk, once per
    /// comparison). Objects a failed walk passed through to such an object are not walked again
    /// in this comparison, so a chain of objects costs its length once, not its square.
    func walk(
        from number: Int,
        generation: Int,
        in document: QPDFDocument,
        learning: Bool = false,
        isVisited: (Int) -> Bool
    ) -> Walk? {
        guard learning || !failed.contains(number) else { return nil }
        var walk = Walk(objects: [], values: 0)
        var complete = true
        var seen: Set<Int> = [number]
        // Each object with the index (in walk.objects) of the object that led to it.
        var stack = [(number: number, generation: generation, parent: -1)]
        var parents: [Int] = []
        while let (number, generation, parent) = stack.popLast() {
            let found = learning || !failed.contains(number) ? record(number, generation, in: document) : nil
            if learning {
                // Every object it reaches is read (a changed one's references are not known).
                guard let (record, isKept) = found else {
                    complete = false
                    continue
                }
                complete = complete && isKept
                walk.objects.append(number)
                parents.append(parent)
                walk.values += record.values
                push(record, from: walk.objects.count - 1)
                continue
            }
            guard let (record, isKept) = found, isKept else {
                // This object and every one that led to it cannot be replayed now.
                failed.insert(number)
                var index = parent
                while index >= 0, failed.insert(walk.objects[index]).inserted { index = parents[index] }
                return nil
            }
            walk.objects.append(number)
            parents.append(parent)
            walk.values += record.values
            push(record, from: walk.objects.count - 1)
        }
        return complete ? walk : nil

        func push(_ record: Record, from index: Int) {
            for reference in record.references where !isVisited(reference.number) {
                if seen.insert(reference.number).inserted {
                    stack.append((reference.number, reference.generation, index))
                }
            }
        }
    }

    /// The record of an unchanged object and whether it was kept before this comparison (else it
    /// is read now); nil for an object changed in this revision or one that cannot be kept.
    private func record(_ number: Int, _ generation: Int, in document: QPDFDocument) -> (Record, Bool)? {
        guard number > 0, number < entries.count, !changed.contains(number), entries[number].generation == generation
        else { return nil }
        let entry = entries[number]
        if let record = records[number], record.entry == entry {
            guard let container = record.container else { return (record, true) }
            let isSame = !changed.contains(container.number) && entries[container.number] == container.entry
            return isSame ? (record, true) : nil
        }
        if let record = fresh[number] { return (record, false) }
        guard let record = read(number, generation, entry, in: document) else { return nil }
        fresh[number] = record
        return (record, false)
    }

    /// Reads object `number` from `document` and makes its record; nil when it depends on objects
    /// a record does not cover.
    private func read(_ number: Int, _ generation: Int, _ entry: Entry, in document: QPDFDocument) -> Record? {
        guard let object = document.object(number: number, generation: generation) else { return nil }
        var container: (number: Int, entry: Entry)?
        if case .compressed(let stream, _) = entry {
            let streamNumber = Int(stream)
            guard streamNumber < entries.count, !changed.contains(streamNumber),
                let holder = document.object(number: streamNumber, generation: 0), document.isStream(holder),
                !holdsReference(document.dictionary(of: holder), in: document)
            else { return nil }
            container = (streamNumber, entries[streamNumber])
        }
        if document.isStream(object) {
            let length = document.key(document.dictionary(of: object), "/Length")
            guard length.map(document.isIndirect) != true, document.streamData(object) != nil else { return nil }
        }
        var record = Record(entry: entry, container: container, references: [], values: 0)
        var stack = values(of: object, in: document)
        while let value = stack.popLast() {
            record.values += 1
            guard let value else { continue }
            if document.isIndirect(value) {
                let id = document.objectID(value)
                record.references.append((id.number, id.generation))
            } else {
                stack += values(of: value, in: document)
            }
        }
        return record
    }

    /// The values a walk takes from a direct object or an object's own contents: an array's
    /// items, a dictionary's (or a stream dictionary's) values, each key's value nil when null.
    private func values(of object: qpdf_oh, in document: QPDFDocument) -> [qpdf_oh?] {
        switch document.typeCode(object) {
        case ot_array: return document.items(object)
        case ot_dictionary, ot_stream:
            let dictionary = document.dictionary(of: object)
            return document.keys(dictionary).map { document.key(dictionary, $0) }
        default: return []
        }
    }

    /// Whether a dictionary holds a reference (at any depth).
    private func holdsReference(_ dictionary: qpdf_oh, in document: QPDFDocument) -> Bool {
        var stack = values(of: dictionary, in: document)
        while let value = stack.popLast() {
            guard let value else { continue }
            if document.isIndirect(value) { return true }
            stack += values(of: value, in: document)
        }
        return false
    }
}
