import CertificateProviders
import Foundation
import PDFSigning

#if canImport(Glibc)
import Glibc
#endif

/// A PDF that comes from standard input or goes to standard output: qpdf and the incremental
/// writer need a file they can seek in, so the PDF passes through a private folder (mode 0700,
/// files 0600) in the system's temporary directory (`TMPDIR`), removed by ``remove()`` or when the
/// buffer goes away, on success and failure alike.
final class PDFPipeBuffer {
    /// The private folder.
    let directory: URL
    private var removed = false

    /// Makes the private folder.
    /// - Throws: `.fileSystem` when the temporary directory does not take it.
    init() throws {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("certsign-pdf-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else {
            throw CertificateProviderError(
                .fileSystem,
                "cannot make a private temporary folder for the piped PDF in "
                    + "\(FileManager.default.temporaryDirectory.path): \(String(cString: strerror(errno)))"
            )
        }
        directory = URL(fileURLWithPath: String(cString: made), isDirectory: true)
    }

    deinit { remove() }

    /// Where the signed PDF is written before it goes to standard output.
    var signedFile: URL { directory.appendingPathComponent("signed.pdf", isDirectory: false) }

    /// Where a PDF read from standard input is kept.
    var inputFile: URL { directory.appendingPathComponent("input.pdf", isDirectory: false) }

    /// Writes `bytes` (a PDF read from standard input already) to ``inputFile`` (mode 0600).
    /// - Throws: `.fileSystem`.
    func writeInput(_ bytes: [UInt8]) throws -> URL {
        let file = try createInputFile()
        do {
            try file.write(contentsOf: bytes)
            try file.close()
        } catch {
            throw failure("writing", inputFile)
        }
        return inputFile
    }

    /// A new, empty ``inputFile`` (mode 0600; never an existing file).
    private func createInputFile() throws -> FileHandle {
        let descriptor = open(inputFile.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("creating", inputFile) }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Copies all of standard input into ``inputFile`` (mode 0600).
    /// - Throws: `.invalidParameter` when the input does not start like a PDF; `.fileSystem`.
    func readStandardInput(_ console: Console) throws -> URL {
        let url = inputFile
        let file = try createInputFile()
        var head: [UInt8] = []
        do {
            while let chunk = try console.readStandardInput(upToCount: 1 << 20), !chunk.isEmpty {
                if head.count < 5 { head += chunk.prefix(5 - head.count) }
                try file.write(contentsOf: chunk)
            }
            try file.close()
        } catch {
            throw failure("writing", url)
        }
        guard Commands.isPDF(head) else {
            throw CertificateProviderError(
                .invalidParameter,
                "standard input is not a PDF (it does not start with %PDF-); pipe a PDF file into 'sign -'"
            )
        }
        return url
    }

    /// Copies the signed PDF to standard output, in chunks.
    /// - Throws: `.fileSystem` when it cannot be read.
    func copySignedFileToStandardOutput(_ console: Console) throws {
        guard let file = FileHandle(forReadingAtPath: signedFile.path) else { throw failure("reading", signedFile) }
        defer { try? file.close() }
        do {
            while let chunk = try file.read(upToCount: 1 << 20), !chunk.isEmpty {
                console.outBytes(Array(chunk))
            }
        } catch {
            throw failure("reading", signedFile)
        }
    }

    /// The CMS signature a signed PDF holds in `/Contents` (the hex string between the signed byte
    /// ranges, without its zero padding): what the journal keeps for a PDF written to standard output.
    /// - Throws: `.fileSystem` when the file cannot be read; `.malformedInput` when the range holds no hex.
    static func embeddedCMS(_ url: URL, _ result: PDFSigningResult) throws -> [UInt8] {
        guard result.byteRange.count == 4, let file = FileHandle(forReadingAtPath: url.path) else {
            throw CertificateProviderError(.fileSystem, "cannot read the signed PDF \(url.path)")
        }
        defer { try? file.close() }
        // `<` opens the hex string right after the first range.
        try file.seek(toOffset: UInt64(result.byteRange[1] + 1))
        let hex = Array(try file.read(upToCount: 2 * result.signatureSize) ?? Data())
        var bytes: [UInt8] = []
        bytes.reserveCapacity(result.signatureSize)
        var index = 0
        while index + 1 < hex.count, let high = hexValue(hex[index]), let low = hexValue(hex[index + 1]) {
            bytes.append(high << 4 | low)
            index += 2
        }
        guard bytes.count == result.signatureSize else {
            throw CertificateProviderError(.malformedInput, "the signed PDF's /Contents is not the signature it holds")
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Removes the folder and everything in it (again: nothing).
    func remove() {
        guard !removed else { return }
        removed = true
        try? FileManager.default.removeItem(at: directory)
    }

    private func failure(_ action: String, _ url: URL) -> CertificateProviderError {
        CertificateProviderError(
            .fileSystem,
            "\(action) the temporary copy of the piped PDF \(url.path) failed: \(String(cString: strerror(errno)))"
        )
    }
}
