import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

@testable import PDFSigning

/// The change analysis hands each revision to qpdf self-contained (``PDFRevisionBuffers``: the
/// file's bytes up to the revision and one section merging the chain), which keeps it linear in
/// the number of revisions. Each test reads its file both ways, merged and revision by revision
/// with the whole chain before it (as a strict reader sees it), and requires the same changes.
@Suite("PDF change analysis over long chains: merged revisions give the changes of the chain read revision by revision")
struct PDFRevisionChainTests {
    let pki: PDFPKI
    init() throws { pki = try PDFPKI(sharedBy: .pdfSuites) }

    /// The changes of every revision after the first, merged and read revision by revision, and
    /// whether the chain merged.
    func analyses(
        _ path: String
    ) throws -> (
        merged: [Int: [PDFRevisionChange]], chained: [Int: [PDFRevisionChange]], merges: Bool
    ) {
        let file = try PDFFile(path: path)
        let revisions = try PDFRevisions.read(file)
        let mapped = try PDFMappedFile(path: path)
        let merged = PDFChangeAnalysis(file: mapped, revisions: revisions, after: 1, description: path)
        let chained = PDFChangeAnalysis(file: mapped, revisions: revisions, after: 1, description: path, merging: false)
        let merges = PDFRevisionBuffers(file: mapped, ends: revisions.ends) != nil
        return (merged.changesByRevision, chained.changesByRevision, merges)
    }

    /// A signed qpdf-made PDF, the start of each chain.
    struct SignedPDF {
        let directory: TemporaryDirectory
        let path: String
        let bytes: [UInt8]
        /// Its last trailer.
        let trailer: PDFUpdateChain.Trailer
        /// The catalog's object number.
        let rootNumber: Int
    }

    /// The file variants and the kinds of update sections the long chains are made of.
    static let variants: [PDFFixtures.Variant] = [.classic, .objectStreams]
    static let sections: [PDFUpdateChain.Sections] = [.tables, .streams]

    /// Signs a qpdf-made PDF of `variant` in a new directory.
    func signedPDF(_ variant: PDFFixtures.Variant, prefix: String) async throws -> SignedPDF {
        let (directory, input) = try PDFFixtures.make(variant, inNewDirectory: prefix)
        let path = try await directory.signPDF(input, into: "signed.pdf", identity: pki.rsa).path
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let trailer = try #require(PDFUpdateChain.trailer(of: bytes))
        let rootNumber = try #require(Int(trailer.root.split(separator: " ")[0]))
        return SignedPDF(directory: directory, path: path, bytes: bytes, trailer: trailer, rootNumber: rootNumber)
    }

    /// Expects the chain at `path` to merge, with the changes it has read revision by revision;
    /// returns our verifier's report of it.
    func expectMerged(
        _ path: String,
        _ description: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> PDFVerificationReport {
        let (merged, chained, merges) = try analyses(path)
        #expect(merges, "\(description) is merged", sourceLocation: sourceLocation)
        #expect(merged == chained, sourceLocation: sourceLocation)
        return try PDFSignatureVerifier.verify(pdfAt: URL(fileURLWithPath: path), trustAnchors: [pki.root])
    }

    /// The catalog of `pdf` with one more entry, as qpdf shows it.
    func catalog(of pdf: SignedPDF, adding entry: String) throws -> String {
        let shown = try ExternalTool.run("qpdf", ["--show-object=\(pdf.rootNumber)", pdf.path])
        try #require(shown.status == 0, "qpdf --show-object: \(shown.errorOutput)")
        let text = shown.output.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(text.hasSuffix(">>"), "the catalog: \(text)")
        return String(text.dropLast(2)) + " \(entry) >>"
    }

    @Test(
        "40 updates after a signature, the 20th adding a catalog entry: the same changes merged, the 20th other",
        arguments: variants,
        sections
    )
    func longChain(_ variant: PDFFixtures.Variant, _ sections: PDFUpdateChain.Sections) async throws {
        let signed = try await signedPDF(variant, prefix: "pdf-chain")
        let changedCatalog = try catalog(of: signed, adding: "/PageMode /UseOutlines")
        let chain = try #require(
            PDFUpdateChain.appending(to: signed.bytes, count: 40, sections: sections) { index in
                index == 19 ? [(signed.rootNumber, changedCatalog)] : []
            }
        )
        let path = try signed.directory.write("chain.pdf", chain)
        let report = try expectMerged(path, "the chain of a \(variant) file with \(sections) updates")
        let signature = try #require(report.signatures.first)
        #expect(report.revisionCount == signature.revision + 40)
        #expect(signature.laterChanges == .other, "\(signature.laterChangesDetail ?? "")")
        let disallowed = signature.changes.filter { !$0.isAllowed }
        #expect(disallowed.map(\.revision) == [signature.revision + 20], "\(disallowed)")
        #expect(disallowed.first?.text.contains("/PageMode") == true, "\(disallowed)")
    }

    @Test("a hybrid update (a table whose trailer names an /XRefStm stream) merges, with the chain's changes")
    func hybridSection() async throws {
        let signed = try await signedPDF(.classic, prefix: "pdf-chain-hybrid")
        let trailer = signed.trailer
        // The /Info object and the stream listing it and itself, then a table naming the stream.
        var out = signed.bytes
        let (info, stream) = (trailer.size, trailer.size + 1)
        let infoOffset = out.count
        out += Array("\(info) 0 obj\n<< /Title (Hybrid) >>\nendobj\n".utf8)
        let streamOffset = out.count
        var rows: [UInt8] = []
        for offset in [infoOffset, streamOffset] {
            rows += [1] + (0..<4).map { UInt8(truncatingIfNeeded: offset >> (24 - 8 * $0)) } + [0, 0]
        }
        out += Array(
            ("\(stream) 0 obj\n<< /Type /XRef /Size \(stream + 1) /W [1 4 2] /Index [\(info) 2] "
                + "/Length \(rows.count) >>\nstream\n").utf8
        )
        out += rows + Array("\nendstream\nendobj\n".utf8)
        let table = out.count
        out += Array(
            ("xref\n0 1\n0000000000 65535 f\r\ntrailer\n<< /Size \(stream + 1) /Root \(trailer.root) R "
                + "/Info \(info) 0 R /Prev \(trailer.startxref) /XRefStm \(streamOffset) >>\n"
                + "startxref\n\(table)\n%%EOF\n").utf8
        )
        let chain = try #require(PDFUpdateChain.appending(to: out, count: 5, sections: .tables))
        let path = try signed.directory.write("hybrid.pdf", chain)
        let report = try expectMerged(path, "the hybrid chain")
        #expect(report.signatures.first?.laterChanges == .ltv, "\(report.signatures.first?.changes ?? [])")
    }

    @Test("chains the merge cannot copy exactly are read revision by revision: two generations, a freed xref stream")
    func unmergedChains() async throws {
        let signed = try await signedPDF(.classic, prefix: "pdf-chain-unmerged")
        let trailer = signed.trailer
        // Two generations of the /Info object: qpdf keeps both entries, a merge would keep one.
        let once = try #require(PDFUpdateChain.appending(to: signed.bytes, count: 1, sections: .tables))
        let last = try #require(PDFUpdateChain.trailer(of: once))
        var generations = once
        let offset = generations.count
        generations += Array("\(trailer.size) 1 obj\n<< /Title (Generation 1) >>\nendobj\n".utf8)
        let start = generations.count
        generations += Array(
            ("xref\n\(trailer.size) 1\n\(String(format: "%010d", offset)) 00001 n\r\ntrailer\n<< /Size \(last.size) "
                + "/Root \(trailer.root) R /Info \(trailer.size) 1 R /Prev \(last.startxref) >>\nstartxref\n\(start)\n%%EOF\n")
                .utf8
        )
        // Stream updates, then a table freeing the last stream's object: qpdf still holds the stream.
        let streams = try #require(PDFUpdateChain.appending(to: signed.bytes, count: 3, sections: .streams))
        let streamsTrailer = try #require(PDFUpdateChain.trailer(of: streams))
        var freed = streams
        let table = freed.count
        freed += Array(
            ("xref\n\(trailer.size + 1) 1\n0000000000 00001 f\r\ntrailer\n<< /Size \(trailer.size + 2) "
                + "/Root \(trailer.root) R /Prev \(streamsTrailer.startxref) >>\nstartxref\n\(table)\n%%EOF\n").utf8
        )
        for (name, bytes) in [("generations.pdf", generations), ("freed-stream.pdf", freed)] {
            let path = try signed.directory.write(name, bytes)
            let (merged, chained, merges) = try analyses(path)
            #expect(!merges, "\(name) is read revision by revision")
            #expect(merged == chained)
        }
    }

    /// The decoded data of stream `number` of `path` (text: the fixtures' content streams).
    func streamData(_ number: Int, of path: String) throws -> String {
        let shown = try ExternalTool.run("qpdf", ["--show-object=\(number)", "--filtered-stream-data", path])
        try #require(shown.status == 0, "qpdf --show-object: \(shown.errorOutput)")
        return shown.output
    }

    @Test(
        "objects read once for many revisions: a later update rewriting one (its data, its /Length object) is seen",
        arguments: variants,
        sections
    )
    func rewrittenKeptObjects(_ variant: PDFFixtures.Variant, _ sections: PDFUpdateChain.Sections) async throws {
        let signed = try await signedPDF(variant, prefix: "pdf-chain-kept")
        let pages = try ExternalTool.run("qpdf", ["--show-pages", signed.path])
        let contents = pages.output.matches(of: #/content:\s+(\d+) 0 R/#).compactMap { Int($0.1) }
        try #require(contents.count >= 2, "two pages with a content stream each: \(pages.output)")
        let (first, second) = (contents[0], contents[1])
        // The catalog written again as it is, at another offset: no change.
        let same = try catalog(of: signed, adding: "")
        let edited = "<< /Length 15 >>\nstream\n0 0 m 10 10 l S\nendstream"
        let data = try streamData(second, of: signed.path)
        let lengthObject = signed.trailer.size + 5
        let indirect = "<< /Length \(lengthObject) 0 R >>\nstream\n\(data)\nendstream"
        let chain = try #require(
            PDFUpdateChain.appending(to: signed.bytes, count: 30, sections: sections) { index in
                switch index {
                case 5: return [(signed.rootNumber, same)]
                case 10: return [(first, edited)]
                case 15: return [(second, indirect), (lengthObject, "\(data.utf8.count)")]
                case 20: return [(lengthObject, "\(max(1, data.utf8.count / 2))")]
                default: return []
                }
            }
        )
        let path = try signed.directory.write("kept.pdf", chain)
        let report = try expectMerged(path, "the chain of a \(variant) file with \(sections) updates")
        let signature = try #require(report.signatures.first)
        let disallowed = Set(signature.changes.filter { !$0.isAllowed }.map(\.revision))
        // The edited stream, the one given an indirect /Length, then that stream cut short by its
        // /Length object: qpdf cannot read it in any revision after.
        let expected = Set(([11, 16] + Array(21...30)).map { signature.revision + $0 })
        #expect(disallowed == expected, "\(signature.changes)")
    }
}
