internal import CertificateProviders
internal import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension FileSystem {
    /// Reads a file the user named, with errors that say what is wrong with the path.
    /// - Parameter what: what the file is, for the message (`PKCS#12 file`).
    /// - Throws: `.fileSystem` saying whether it is missing, a directory, or unreadable (and why).
    package static func readInputFile(_ path: String, what: String) throws -> [UInt8] {
        // One open, one fstat and the reads: a batch reads thousands of small files, and checking
        // the path first, then reading it through Foundation, opened each one twice.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            _ = try checkReadableFile(path, what: what)
            throw CertificateProviderError(.fileSystem, "the \(what) \(path) cannot be read: \(errorText(code))")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw CertificateProviderError(.fileSystem, "the \(what) \(path) cannot be read: \(errorText())")
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw CertificateProviderError(.fileSystem, "\(path) is a directory, not a \(what)")
        }
        // A regular file is read in one call and its end in another; a pipe (size 0) in chunks.
        let expected = max(0, Int(clamping: info.st_size))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(expected)
        var chunk = [UInt8](repeating: 0, count: min(max(expected + 1, 4096), 1 << 20))
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CertificateProviderError(.fileSystem, "the \(what) \(path) cannot be read: \(errorText())")
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Checks that `path` is a regular file this process can open, and returns its size.
    /// - Throws: `.fileSystem` saying whether it is missing, a directory, or unreadable (and why).
    package static func checkReadableFile(_ path: String, what: String) throws -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            var link = stat()
            if code == ENOENT && lstat(path, &link) != 0 {
                throw CertificateProviderError(.fileSystem, "the \(what) \(path) does not exist")
            }
            throw CertificateProviderError(.fileSystem, "the \(what) \(path) cannot be read: \(errorText(code))")
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw CertificateProviderError(.fileSystem, "\(path) is a directory, not a \(what)")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CertificateProviderError(
                .fileSystem,
                "the \(what) \(path) cannot be read: \(errorText()) (check its permissions)"
            )
        }
        close(descriptor)
        return Int64(info.st_size)
    }
}
