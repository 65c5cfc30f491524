internal import CQPDF
import CertificateProviders
import Foundation

/// One PDF opened read-only with qpdf's C API. qpdf reads every cross-reference variant (tables,
/// streams, object streams, linearized, hybrid); this package never lets it write.
///
/// Object handles (`qpdf_oh`) belong to the `qpdf_data` and are freed with it in `deinit`. Not
/// Sendable: one document is used by one task, start to end.
final class QPDFDocument {
    private var data: qpdf_data?
    /// The mapped file a document opened from a mapping reads (kept alive until cleanup).
    private var mapping: PDFMappedFile?
    /// The buffer a document opened from a revision's buffer reads (kept alive until cleanup).
    private var revisionBuffer: PDFRevisionBuffer?
    let path: String

    /// Opens `path`.
    /// - Throws: `.unsupportedOperation` for an encrypted PDF; `.malformedInput` when qpdf cannot
    ///   read the file; `.fileSystem` when it does not exist.
    init(path: String) throws {
        self.path = path
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw CertificateProviderError(.fileSystem, "cannot read '\(path)'")
        }
        // qpdf would "recover" any file and report its internals; a file without the header is no PDF.
        guard let handle = FileHandle(forReadingAtPath: path),
            Self.startsAsPDF(Array((try? handle.read(upToCount: Self.headerWindow)) ?? Data()))
        else {
            throw CertificateProviderError(
                .malformedInput,
                "'\(path)' is not a PDF: no %PDF- header in its first \(Self.headerWindow) bytes"
            )
        }
        try? handle.close()
        data = qpdf_init()
        qpdf_silence_errors(data)
        qpdf_set_suppress_warnings(data, QPDF_TRUE)
        let status = qpdf_read(data, path, nil)
        if status & QPDF_ERRORS != 0 {
            let text = lastError() ?? "unknown qpdf error"
            if text.localizedCaseInsensitiveContains("password") {
                throw PDFSigningErrors.encrypted(path)
            }
            throw CertificateProviderError(.malformedInput, "'\(path)' is not a PDF this package can read: \(text)")
        }
        if qpdf_is_encrypted(data) != QPDF_FALSE { throw PDFSigningErrors.encrypted(path) }
    }

    /// How far into a file its `%PDF-` header may stand (readers allow leading bytes, as Acrobat does).
    static let headerWindow = 1024

    /// Whether `prefix` (a file's first bytes) holds the `%PDF-` header.
    static func startsAsPDF(_ prefix: [UInt8]) -> Bool {
        let marker = Array("%PDF-".utf8)
        guard prefix.count >= marker.count else { return false }
        return (0...(prefix.count - marker.count)).contains { prefix[$0..<($0 + marker.count)].elementsEqual(marker) }
    }

    /// Opens the first `length` bytes of a mapped file (one revision) without copying them; the
    /// mapping stays alive with the document. `strict`: qpdf does not repair a broken
    /// cross-reference (it reads what a strict reader reads, or fails).
    /// - Throws: as ``init(path:)``.
    init(mapped file: PDFMappedFile, length: Int, description: String, strict: Bool) throws {
        path = description
        mapping = file
        data = qpdf_init()
        try readMemory(file.base.assumingMemoryBound(to: CChar.self), length: min(length, file.count), strict: strict)
    }

    /// Opens the first `length` bytes of `buffer` (one revision made self-contained, see
    /// ``PDFRevisionBuffers``); the buffer stays alive, unchanged, with the document. `strict` as in
    /// ``init(mapped:length:description:strict:)``.
    /// - Throws: as ``init(path:)``.
    init(buffer: PDFRevisionBuffer, length: Int, description: String, strict: Bool) throws {
        path = description
        revisionBuffer = buffer
        data = qpdf_init()
        let base = UnsafeRawPointer(buffer.storage.baseAddress)?.assumingMemoryBound(to: CChar.self)
        try readMemory(base, length: min(length, buffer.storage.count), strict: strict)
    }

    /// Has qpdf read `length` bytes at `base` (which must stay alive with the document) as the PDF
    /// named ``path``: errors silenced into the thrown error, warnings kept for ``takeWarnings()``,
    /// no repair of a broken cross-reference when `strict`.
    /// - Throws: `.malformedInput` naming the document and qpdf's reason; encrypted PDFs.
    private func readMemory(_ base: UnsafePointer<CChar>?, length: Int, strict: Bool) throws {
        qpdf_silence_errors(data)
        qpdf_set_suppress_warnings(data, QPDF_TRUE)
        if strict { qpdf_set_attempt_recovery(data, QPDF_FALSE) }
        let status = qpdf_read_memory(data, path, base, UInt64(length), nil)
        if status & QPDF_ERRORS != 0 {
            let text = lastError() ?? "unknown qpdf error"
            throw CertificateProviderError(.malformedInput, "'\(path)' is not a PDF this package can read: \(text)")
        }
        if qpdf_is_encrypted(data) != QPDF_FALSE { throw PDFSigningErrors.encrypted(path) }
    }

    deinit {
        // An init that threw before qpdf_init made nothing to clean up.
        guard data != nil else { return }
        // An error qpdf saved and nobody fetched would be printed by qpdf_cleanup: fetch it (a
        // library does not print; what mattered was reported through the calls' results).
        while qpdf_has_error(data) != QPDF_FALSE { _ = qpdf_get_error(data) }
        qpdf_cleanup(&data)
    }

    private func lastError() -> String? {
        guard qpdf_has_error(data) != QPDF_FALSE, let error = qpdf_get_error(data),
            let text = qpdf_get_error_full_text(data, error)
        else { return nil }
        return String(cString: text)
    }

    var trailer: qpdf_oh { qpdf_get_trailer(data) }
    var root: qpdf_oh { qpdf_get_root(data) }
    var pageCount: Int { Int(qpdf_get_num_pages(data)) }
    func page(_ index: Int) -> qpdf_oh { qpdf_get_page_n(data, Int(index)) }

    // MARK: Objects

    /// The indirect object `number generation R`, or nil when the file has none.
    func object(number: Int, generation: Int) -> qpdf_oh? {
        let handle = qpdf_get_object_by_id(data, Int32(number), Int32(generation))
        return qpdf_oh_is_null(data, handle) != QPDF_FALSE ? nil : handle
    }
    func isStream(_ object: qpdf_oh) -> Bool { qpdf_oh_is_stream(data, object) != QPDF_FALSE }
    /// A stream's dictionary, or the object itself when it is not a stream.
    func dictionary(of object: qpdf_oh) -> qpdf_oh { isStream(object) ? qpdf_oh_get_dict(data, object) : object }
    /// A dictionary's keys (`/Type`, …); empty for other objects.
    func keys(_ dictionary: qpdf_oh) -> [String] {
        guard isDictionary(dictionary) else { return [] }
        var keys: [String] = []
        qpdf_oh_begin_dict_key_iter(data, dictionary)
        while qpdf_oh_dict_more_keys(data) != QPDF_FALSE {
            if let key = qpdf_oh_dict_next_key(data) { keys.append(String(cString: key)) }
        }
        return keys
    }
    /// A stream's data: raw (as stored) or decoded with the generalized filters; nil when qpdf
    /// cannot give it.
    func streamData(_ stream: qpdf_oh, decoded: Bool = false) -> [UInt8]? {
        var buffer: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = qpdf_oh_get_stream_data(
            data,
            stream,
            decoded ? qpdf_dl_generalized : qpdf_dl_none,
            nil,
            &buffer,
            &length
        )
        guard status & QPDF_ERRORS == 0 else {
            _ = lastError()
            return nil
        }
        // An empty stream comes back without a buffer.
        guard let buffer else { return [] }
        defer { free(buffer) }
        return Array(UnsafeBufferPointer(start: buffer, count: length))
    }

    /// A stream's data decoded with every filter qpdf applies to a cross-reference stream; nil
    /// when qpdf cannot decode it all (it would give the data as stored) or warns.
    func specializedStreamData(_ stream: qpdf_oh) -> [UInt8]? {
        var filtered = QPDF_FALSE
        var buffer: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = qpdf_oh_get_stream_data(data, stream, qpdf_dl_specialized, &filtered, &buffer, &length)
        defer { free(buffer) }
        guard status & QPDF_ERRORS == 0, filtered != QPDF_FALSE, takeWarnings().isEmpty else { return nil }
        return buffer.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
    }

    /// What qpdf warned about since the last call (an object it could not read and took as null,
    /// a damaged structure it skipped), and an error of an object call, as text; each only once.
    func takeWarnings() -> [String] {
        var warnings: [String] = []
        while qpdf_more_warnings(data) != QPDF_FALSE, let warning = qpdf_next_warning(data) {
            warnings.append(qpdf_get_error_full_text(data, warning).map { String(cString: $0) } ?? "a warning")
        }
        if let error = lastError() { warnings.append(error) }
        // A /Size above the highest object number plus one (pyHanko's writer leaves one) hides
        // nothing: every object is still read through the cross-reference sections.
        return warnings.filter { !$0.contains("reported number of objects") }
    }

    func key(_ object: qpdf_oh, _ name: String) -> qpdf_oh? {
        // A missing key reads as null; only a dictionary is asked (anything else would warn).
        guard qpdf_oh_is_dictionary(data, object) != QPDF_FALSE else { return nil }
        let value = qpdf_oh_get_key(data, object, name)
        return qpdf_oh_is_null(data, value) != QPDF_FALSE ? nil : value
    }
    /// The object's type, resolving a reference (`ot_null` for a missing or freed object).
    func typeCode(_ object: qpdf_oh) -> qpdf_object_type_e { qpdf_oh_get_type_code(data, object) }
    func isDictionary(_ object: qpdf_oh) -> Bool { qpdf_oh_is_dictionary(data, object) != QPDF_FALSE }
    func isArray(_ object: qpdf_oh) -> Bool { qpdf_oh_is_array(data, object) != QPDF_FALSE }
    func isIndirect(_ object: qpdf_oh) -> Bool { qpdf_oh_is_indirect(data, object) != QPDF_FALSE }
    func isName(_ object: qpdf_oh, _ name: String) -> Bool {
        qpdf_oh_is_name_and_equals(data, object, name) != QPDF_FALSE
    }
    func objectID(_ object: qpdf_oh) -> (number: Int, generation: Int) {
        (Int(qpdf_oh_get_object_id(data, object)), Int(qpdf_oh_get_generation(data, object)))
    }
    func integer(_ object: qpdf_oh) -> Int64? {
        qpdf_oh_is_integer(data, object) != QPDF_FALSE ? Int64(qpdf_oh_get_int_value(data, object)) : nil
    }
    func items(_ array: qpdf_oh) -> [qpdf_oh] {
        guard isArray(array) else { return [] }
        return (0..<qpdf_oh_get_array_n_items(data, array)).map { qpdf_oh_get_array_item(data, array, $0) }
    }
    /// A number's value (an integer or a real).
    func real(_ object: qpdf_oh) -> Double? {
        qpdf_oh_is_number(data, object) != QPDF_FALSE ? qpdf_oh_get_numeric_value(data, object) : nil
    }
    /// A string's bytes (no text decoding).
    func bytes(_ object: qpdf_oh) -> [UInt8]? {
        guard qpdf_oh_is_string(data, object) != QPDF_FALSE else { return nil }
        var length = 0
        guard let pointer = qpdf_oh_get_binary_string_value(data, object, &length) else { return nil }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }
    /// A text string decoded (PDFDocEncoding or UTF-16BE) to UTF-8.
    func text(_ object: qpdf_oh) -> String? {
        guard qpdf_oh_is_string(data, object) != QPDF_FALSE, let value = qpdf_oh_get_utf8_value(data, object) else {
            return nil
        }
        return String(cString: value)
    }
    /// PDF syntax of the object; indirect objects as `n g R`.
    func unparse(_ object: qpdf_oh) -> String { String(cString: qpdf_oh_unparse(data, object)) }
    /// PDF syntax of the object itself (its direct contents), nested indirect objects as `n g R`.
    func unparseResolved(_ object: qpdf_oh) -> String { String(cString: qpdf_oh_unparse_resolved(data, object)) }

    // MARK: Changing copies in memory (never written by qpdf)

    func newArray() -> qpdf_oh { qpdf_oh_new_array(data) }
    func newDictionary() -> qpdf_oh { qpdf_oh_new_dictionary(data) }
    func newName(_ name: String) -> qpdf_oh { qpdf_oh_new_name(data, name) }
    func newInteger(_ value: Int64) -> qpdf_oh { qpdf_oh_new_integer(data, value) }
    func append(_ array: qpdf_oh, _ item: qpdf_oh) { qpdf_oh_append_item(data, array, item) }
    func set(_ dictionary: qpdf_oh, _ key: String, _ value: qpdf_oh) {
        qpdf_oh_replace_key(data, dictionary, key, value)
    }
}

/// The errors PDF signing throws, with the action for the user in the reason.
enum PDFSigningErrors {
    static func encrypted(_ path: String) -> CertificateProviderError {
        CertificateProviderError(
            .unsupportedOperation,
            "'\(path)' is encrypted; signing encrypted PDFs is not supported yet: decrypt it first (qpdf --decrypt)"
        )
    }
}
