import CertificateProviders
internal import Durability
import Foundation
import Glibc

/// A PDF mapped read-only into memory, so that qpdf reads each revision (a prefix of the file)
/// straight from the page cache: no copy of the file per revision, whatever its size.
final class PDFMappedFile {
    let path: String
    let base: UnsafeRawPointer
    let count: Int

    /// Maps `path`.
    /// - Throws: `.fileSystem` when it cannot be opened or mapped; `.malformedInput` when empty.
    init(path: String) throws {
        self.path = path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileSystem.failure("cannot open", path) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw FileSystem.failure("cannot read", path) }
        guard info.st_size > 0 else { throw CertificateProviderError(.malformedInput, "'\(path)' is empty") }
        let mapped = mmap(nil, Int(info.st_size), PROT_READ, MAP_PRIVATE, descriptor, 0)
        guard let mapped, mapped != MAP_FAILED else { throw FileSystem.failure("cannot map", path) }
        base = UnsafeRawPointer(mapped)
        count = Int(info.st_size)
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: base), count) }
}
