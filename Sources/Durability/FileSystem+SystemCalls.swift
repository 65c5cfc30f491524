internal import CSystemShims

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// A file of its own: `internal import CSystemShims` would make `mode_t` in FileSystem.swift's
// package signatures come from an internal import.
extension FileSystem {
    /// Makes everything written to the file system that holds `directory` durable with one
    /// `syncfs(2)`: the data of every file written there (by any process) reaches the device.
    /// Cheaper than one `fsync` per file when many files were written, and costlier when few were:
    /// it also flushes other programs' dirty data on that file system. Renames and creates still
    /// need ``syncDirectory(_:)``.
    /// - Throws: `.fileSystem` naming `directory` when it cannot be opened or the write-back failed
    ///   (Linux reports write-back errors to `syncfs` since 5.8).
    package static func syncFileSystem(of directory: String) throws {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("opening the directory", directory) }
        defer { close(descriptor) }
        guard CSystemShims_syncfs(descriptor) == 0 else {
            throw failure("syncing the file system of the directory", directory)
        }
    }

    /// Swaps what `from` and `to` name in one step (`renameat2` with `RENAME_EXCHANGE`): readers and a
    /// crash see the old entry or the new one under `to`, never none. Both must exist.
    /// - Returns: false when the file system or the kernel cannot exchange (`EINVAL`, `ENOSYS`): the
    ///   caller takes another way; nothing was changed.
    /// - Throws: `.fileSystem` naming `to` for any other failure.
    package static func exchange(_ from: String, with to: String) throws -> Bool {
        if CSystemShims_renameExchange(from, to) == 0 { return true }
        let code = errno
        guard code == EINVAL || code == ENOSYS else { throw failure("exchanging with", to, code) }
        return false
    }
}
