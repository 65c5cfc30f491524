import CertificateProviders
import Foundation
import Signing

/// A `/DSS` revision (ISO 32000-2 §12.8.4.3, ETSI EN 319 142-1 §5.4): an incremental update that
/// adds the catalog's Document Security Store, or extends the one the file has, with `/Certs`,
/// `/OCSPs` and `/CRLs` (one stream object per item, each item once: what the file's DSS already
/// holds is referenced, not written again) and, on request, a `/VRI` entry per signature keyed by
/// the upper-case hex SHA-1 of its whole `/Contents` value, padding included (pyHanko's key).
struct DSSRevision {
    /// The validation data of one signature for its `/VRI` entry.
    struct VRIEntry {
        /// The signature's `/Contents` bytes, zero padding included.
        let contents: [UInt8]
        let data: ValidationData

        /// `/` + the upper-case hex SHA-1 of ``contents``.
        var key: String { "/" + VRIKey.hex(ofSignatureContents: contents) }
    }

    /// What the revision added.
    struct Added: Equatable {
        var certificates = 0
        var ocspResponses = 0
        var crls = 0
        var vriEntries = 0
        var isEmpty: Bool { certificates + ocspResponses + crls + vriEntries == 0 }
    }

    /// The references of the items a DSS array holds, by their bytes.
    private struct Store {
        var references: [[UInt8]: String] = [:]
        var order: [String] = []

        mutating func add(_ bytes: [UInt8], reference: String) {
            guard references[bytes] == nil else { return }
            references[bytes] = reference
            order.append(reference)
        }
    }

    private let document: QPDFDocument
    private var update = IncrementalUpdate()
    private var nextNumber: Int
    private var certs = Store()
    private var ocsps = Store()
    private var crls = Store()
    private var added = Added()

    private init(document: QPDFDocument, size: Int) {
        self.document = document
        nextNumber = size
    }

    /// Appends a DSS revision holding `data` (and `vri` entries) to the PDF at `input`, written to
    /// `temporary` (an existing empty file).
    /// - Returns: what was added; nothing is appended (and the copy is the original) when the
    ///   file's DSS already holds it all.
    /// - Throws: `.malformedInput` for a PDF without catalog or `/Size`; `.fileSystem`.
    static func append(
        _ data: ValidationData,
        vri: [VRIEntry],
        to input: URL,
        writingTo temporary: String
    ) throws -> Added {
        let file = try PDFFile(path: input.path)
        let document = try QPDFDocument(path: input.path)
        guard document.isDictionary(document.root), document.isIndirect(document.root) else {
            throw CertificateProviderError(.malformedInput, "'\(input.path)' has no document catalog")
        }
        guard let size = document.key(document.trailer, "/Size").flatMap(document.integer), size > 0 else {
            throw CertificateProviderError(.malformedInput, "'\(input.path)' has no /Size in its trailer")
        }
        var revision = DSSRevision(document: document, size: Int(size))
        revision.readExisting()
        let body = revision.dictionary(for: data, vri: vri)
        let target = try PDFFile(path: temporary, writable: true)
        try PDFSigner.copyOriginal(input, to: target, expectedSize: file.size)
        guard !revision.added.isEmpty else { return revision.added }
        try revision.place(body)
        let serialized = try revision.update.serialize(
            after: file,
            document: document,
            size: max(Int(size), revision.nextNumber)
        )
        try target.write(serialized.bytes, at: file.size)
        try target.sync()
        return revision.added
    }

    /// Reads the items the file's DSS holds (their decoded stream bytes and references).
    private mutating func readExisting() {
        guard let dss = document.key(document.root, "/DSS") else { return }
        for (key, keyPath) in [("/Certs", \Self.certs), ("/OCSPs", \Self.ocsps), ("/CRLs", \Self.crls)] {
            for item in document.items(document.key(dss, key) ?? document.newArray())
            where document.isIndirect(item) && document.isStream(item) {
                if let bytes = document.streamData(item, decoded: true) {
                    self[keyPath: keyPath].add(bytes, reference: document.unparse(item))
                }
            }
        }
    }

    /// The new DSS dictionary: the file's items and the new ones, the file's VRI entries and the
    /// new ones (a new entry replaces one of the same key).
    private mutating func dictionary(for data: ValidationData, vri: [VRIEntry]) -> String {
        for certificate in data.certificates { _ = reference(certificate.derRepresentation, in: \.certs) }
        for response in data.ocspResponses { _ = reference(response, in: \.ocsps) }
        for crl in data.crls { _ = reference(crl.derRepresentation, in: \.crls) }
        var entries: [String: String] = [:]
        if let existing = document.key(document.root, "/DSS").flatMap({ document.key($0, "/VRI") }) {
            for key in document.keys(existing) {
                if let value = document.key(existing, key) { entries[key] = document.unparse(value) }
            }
        }
        for entry in vri {
            let certificates = entry.data.certificates.map { reference($0.derRepresentation, in: \.certs) }
            let responses = entry.data.ocspResponses.map { reference($0, in: \.ocsps) }
            let lists = entry.data.crls.map { reference($0.derRepresentation, in: \.crls) }
            var value = "<< /Type /VRI"
            if !certificates.isEmpty { value += " /Cert [\(certificates.joined(separator: " "))]" }
            if !responses.isEmpty { value += " /OCSP [\(responses.joined(separator: " "))]" }
            if !lists.isEmpty { value += " /CRL [\(lists.joined(separator: " "))]" }
            value += " >>"
            if entries[entry.key] != value {
                entries[entry.key] = value
                added.vriEntries += 1
            }
        }
        var body = "<< /Type /DSS"
        if !certs.order.isEmpty { body += " /Certs [\(certs.order.joined(separator: " "))]" }
        if !ocsps.order.isEmpty { body += " /OCSPs [\(ocsps.order.joined(separator: " "))]" }
        if !crls.order.isEmpty { body += " /CRLs [\(crls.order.joined(separator: " "))]" }
        if !entries.isEmpty {
            body += " /VRI << " + entries.keys.sorted().map { "\($0) \(entries[$0]!)" }.joined(separator: " ") + " >>"
        }
        return body + " >>"
    }

    /// The reference of `bytes` in a store: the file's object, or a new stream object.
    private mutating func reference(_ bytes: [UInt8], in keyPath: WritableKeyPath<Self, Store>) -> String {
        if let known = self[keyPath: keyPath].references[bytes] { return known }
        let number = nextNumber
        nextNumber += 1
        let body = Array("<< /Length \(bytes.count) >>\nstream\n".utf8) + bytes + Array("\nendstream".utf8)
        update.objects.append(.init(number: number, generation: 0, body: body))
        self[keyPath: keyPath].add(bytes, reference: "\(number) 0 R")
        switch keyPath {
        case \Self.certs: added.certificates += 1
        case \Self.ocsps: added.ocspResponses += 1
        default: added.crls += 1
        }
        return "\(number) 0 R"
    }

    /// Writes the DSS dictionary: over the file's DSS object when it is indirect, else as a new
    /// object the catalog (rewritten) points at.
    private mutating func place(_ body: String) throws {
        let root = document.root
        if let existing = document.key(root, "/DSS"), document.isIndirect(existing) {
            let id = document.objectID(existing)
            update.objects.append(.init(number: id.number, generation: id.generation, body: Array(body.utf8)))
            return
        }
        let number = nextNumber
        nextNumber += 1
        update.objects.append(.init(number: number, generation: 0, body: Array(body.utf8)))
        let placeholder = "/CertSignPlaceholderDSS"
        document.set(root, "/DSS", document.newName(placeholder))
        let catalog = document.unparseResolved(root).replacingOccurrences(of: placeholder, with: "\(number) 0 R")
        let id = document.objectID(root)
        update.objects.append(.init(number: id.number, generation: id.generation, body: Array(catalog.utf8)))
    }
}
