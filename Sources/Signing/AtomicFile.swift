import CertificateProviders
import Foundation
import Glibc

/// Writes a file so that readers see either the old state or the complete new file: a temporary
/// file in the same directory, `fsync`, `rename`, then `fsync` of the directory. On any error the
/// temporary file is removed and nothing appears under the final name.
enum AtomicFile {
    /// Writes `bytes` to `url`, replacing an existing file.
    /// - Throws: `.fileSystem` naming the step that failed.
    static func write(_ bytes: [UInt8], to url: URL) throws {
        let directory = url.deletingLastPathComponent().path
        let temporary = "\(directory)/.\(url.lastPathComponent).\(UUID().uuidString).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileDigest.fileError("cannot create a file next to", url) }
        var committed = false
        defer { if !committed { unlink(temporary) } }
        do {
            defer { close(descriptor) }
            try bytes.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return }
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(descriptor, base + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw FileDigest.fileError("cannot write", url)
                    }
                    offset += written
                }
            }
            guard fsync(descriptor) == 0 else { throw FileDigest.fileError("cannot flush", url) }
        }
        guard rename(temporary, url.path) == 0 else { throw FileDigest.fileError("cannot move the finished file to", url) }
        committed = true
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            _ = fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}
