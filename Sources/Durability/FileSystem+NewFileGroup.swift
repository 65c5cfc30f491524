package import CertificateProviders
internal import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension FileSystem {
    /// The fewest new files on one file system for which ``writeNewFiles(_:mode:)`` makes them
    /// durable with one ``syncFileSystem(of:)`` instead of one `fsync` each: below it, a `syncfs`
    /// costs more than the `fsync`s, and flushes other programs' data for nothing.
    package static let minimumFilesPerFileSystemSync = 8

    /// Creates many new files, none replacing a file that exists, each durable before its name
    /// appears, with one flush per file system instead of one per file:
    ///
    /// 1. each file is written to a hidden temporary file next to it (``writeTemporary(for:_:mode:)``),
    ///    without `fsync`;
    /// 2. each file system that received at least ``minimumFilesPerFileSystemSync`` of them is flushed
    ///    once (`syncfs`); the files of the others are `fsync`ed one by one;
    /// 3. each temporary file is linked to its name (`link(2)`: a name that appeared meanwhile is
    ///    never replaced) and removed;
    /// 4. each directory is synced once.
    ///
    /// A crash leaves, for each file, its complete contents under its name or no file (at most a
    /// hidden temporary file beside it). A file that fails fails alone, with nothing left behind.
    /// - Returns: per file, in order, nil when it was created, else why not: `.alreadyExists` when
    ///   its name exists, `.fileSystem` naming it.
    package static func writeNewFiles(
        _ files: [(path: String, bytes: [UInt8])],
        mode: mode_t = 0o600
    ) -> [CertificateProviderError?] {
        var errors = [CertificateProviderError?](repeating: nil, count: files.count)
        var temporaries = [String?](repeating: nil, count: files.count)
        var perDevice: [UInt64: [Int]] = [:]
        var devices: [String: UInt64] = [:]
        for (index, file) in files.enumerated() {
            if exists(file.path) {
                errors[index] = CertificateProviderError(.alreadyExists, "'\(file.path)' already exists")
                continue
            }
            do {
                temporaries[index] = try writeTemporary(for: file.path, file.bytes, mode: mode)
            } catch {
                errors[index] = error as? CertificateProviderError ?? CertificateProviderError(.fileSystem, "\(error)")
                continue
            }
            let folder = directory(of: file.path)
            let device = devices[folder] ?? device(of: folder) ?? 0
            devices[folder] = device
            perDevice[device, default: []].append(index)
        }
        for indices in perDevice.values {
            flush(indices, files, temporaries, &errors)
        }
        var directories: [String: [Int]] = [:]
        for index in files.indices {
            guard let temporary = temporaries[index] else { continue }
            defer { unlink(temporary) }
            guard errors[index] == nil else { continue }
            do {
                try link(temporary, files[index].path)
                directories[directory(of: files[index].path), default: []].append(index)
            } catch {
                errors[index] = error as? CertificateProviderError ?? CertificateProviderError(.fileSystem, "\(error)")
            }
        }
        for (directory, indices) in directories {
            do { try syncDirectory(directory) } catch {
                let failure = error as? CertificateProviderError ?? CertificateProviderError(.fileSystem, "\(error)")
                for index in indices {
                    unlink(files[index].path)
                    errors[index] = failure
                }
            }
        }
        return errors
    }

    /// Step 2 of ``writeNewFiles(_:mode:)`` for the files of one file system.
    private static func flush(
        _ indices: [Int],
        _ files: [(path: String, bytes: [UInt8])],
        _ temporaries: [String?],
        _ errors: inout [CertificateProviderError?]
    ) {
        if indices.count >= minimumFilesPerFileSystemSync {
            do { try syncFileSystem(of: directory(of: files[indices[0]].path)) } catch {
                let failure = error as? CertificateProviderError ?? CertificateProviderError(.fileSystem, "\(error)")
                for index in indices { errors[index] = failure }
            }
            return
        }
        for index in indices {
            guard let temporary = temporaries[index] else { continue }
            let descriptor = open(temporary, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0, fsync(descriptor) == 0 else {
                errors[index] = failure("syncing", files[index].path)
                if descriptor >= 0 { close(descriptor) }
                continue
            }
            close(descriptor)
        }
    }

    /// The directory part of `path` (`.` for a bare name).
    private static func directory(of path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }
}
