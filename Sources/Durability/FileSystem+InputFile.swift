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
        _ = try checkReadableFile(path, what: what)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CertificateProviderError(.fileSystem, "the \(what) \(path) cannot be read")
        }
        return Array(data)
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
