import CertificateProviders
import Foundation

/// What each revision of a PDF changed, found on the object graph: revision `r` (the file's bytes
/// up to its end, opened by qpdf without cross-reference recovery, as a strict reader sees it) is
/// compared with revision `r - 1` by ``PDFRevisionComparison``; a signature's later changes are
/// those of the revisions after the one it signed, judged by its ``PDFModificationPolicy``.
///
/// Each pair of revisions is compared once for all signatures. A revision qpdf cannot read
/// strictly is a change of class `other` (reported, not repaired). Each revision is handed to qpdf
/// self-contained (``PDFRevisionBuffers``: classic tables, cross-reference streams and hybrid files
/// alike), so qpdf reads one section per revision, not the whole chain again: linear in the
/// revisions. A chain that cannot be merged exactly as qpdf reads it is read revision by revision.
struct PDFChangeAnalysis {
    /// The changes each revision made, by revision number (from the first one analysed + 1).
    private(set) var changesByRevision: [Int: [PDFRevisionChange]] = [:]
    let revisions: PDFRevisions

    /// Compares every revision after `firstRevision` with the one before it, each read from the
    /// mapped `file`; `merging`: each revision made self-contained when the chain allows it (off:
    /// each read with the whole chain before it, the reference the merge is tested against).
    init(
        file: PDFMappedFile,
        revisions: PDFRevisions,
        after firstRevision: Int,
        description: String,
        merging: Bool = true
    ) {
        self.revisions = revisions
        let ends = revisions.ends
        guard firstRevision >= 1, firstRevision < ends.count else { return }
        // Each revision made self-contained, so qpdf does not read the chain again.
        var buffers = merging ? PDFRevisionBuffers(file: file, ends: ends) : nil
        // What a revision did not rewrite is the same bytes in the next: read once, not per revision.
        let unchanged = buffers.map { PDFUnchangedObjects(highest: $0.highestObjectNumber) }
        func open(_ revision: Int) -> Result<QPDFDocument, CertificateProviderError> {
            let name = "\(description) (revision \(revision))"
            do {
                defer { if let changes = buffers?.latestChanges { unchanged?.advance(changes: changes) } }
                if let document = try buffers?.document(revision: revision, description: name) {
                    return .success(document)
                }
                return .success(
                    try QPDFDocument(mapped: file, length: Int(ends[revision - 1]), description: name, strict: true)
                )
            } catch let error as CertificateProviderError {
                return .failure(error)
            } catch {
                return .failure(CertificateProviderError(.malformedInput, "\(error)"))
            }
        }
        var previous = open(firstRevision)
        for revision in (firstRevision + 1)...ends.count {
            let current = open(revision)
            var failure: CertificateProviderError?
            if case .failure(let error) = current { failure = error }
            if revision == firstRevision + 1, case .failure(let error) = previous { failure = error }
            if let failure {
                changesByRevision[revision] = [
                    PDFRevisionChange(
                        kind: .other,
                        objects: [],
                        text: "revision \(revision) cannot be compared: qpdf cannot read it without repairing "
                            + "it (\(failure.reason))",
                        field: nil
                    )
                ]
            } else if case .success(let old) = previous, case .success(let new) = current {
                changesByRevision[revision] = PDFRevisionComparison(old: old, new: new, unchanged: unchanged).run()
            }
            previous = current
        }
    }

    /// The changes of every revision after `revision`, judged by `policy`.
    func changes(after revision: Int, policy: PDFModificationPolicy) -> [PDFChange] {
        changesByRevision.keys.sorted().filter { $0 > revision }.flatMap { later in
            (changesByRevision[later] ?? []).map { policy.judge($0, revision: later) }
        }
    }

    /// The worst class among `changes`: other, annotations, formFields, signatures, ltv (ltv
    /// also when nothing the graph shows changed).
    static func worst(_ changes: [PDFChange]) -> PDFLaterChanges {
        let order: [PDFLaterChanges] = [.other, .annotations, .formFields, .signatures]
        return order.first { kind in changes.contains { $0.kind == kind } } ?? .ltv
    }
}
