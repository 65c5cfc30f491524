package import CertificateProviders
package import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The few POSIX calls this package's stores need for atomic, private, cross-process-safe files
/// (identity store, session caches, signature output). Shared between modules with `package` access.
package enum FileSystem {
    package static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    package static func failure(_ what: String, _ path: String, _ code: Int32 = errno) -> CertificateProviderError {
        CertificateProviderError(.fileSystem, "\(what) '\(path)' failed: \(errorText(code))")
    }

    /// Whether something exists at `path` (without following a final symlink).
    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Creates a directory with mode 0700 (and its missing parents, also 0700). An existing
    /// directory is tightened to 0700 only when `tighteningExisting` is set (for directories that
    /// belong to the store alone, never for a directory the user pointed at).
    package static func makePrivateDirectory(_ path: String, tighteningExisting: Bool = false) throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw CertificateProviderError(.fileSystem, "'\(path)' exists and is not a directory")
            }
            if tighteningExisting, (info.st_mode & 0o077) != 0, info.st_uid == geteuid() { _ = chmod(path, 0o700) }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path, !exists(parent) { try makePrivateDirectory(parent) }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw failure("creating the directory", path) }
        _ = chmod(path, 0o700)
    }

    /// Creates a new file (never replacing one) with `mode` (default 0600), writes `bytes`, and
    /// `fsync`s it (unless `syncing` is false: then the caller makes it durable, e.g. with
    /// ``syncFileSystem(of:)``, before it gives the file its final name).
    package static func writeNewFile(
        _ path: String,
        _ bytes: [UInt8],
        mode: mode_t = 0o600,
        syncing: Bool = true
    ) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            if errno == EEXIST { throw CertificateProviderError(.alreadyExists, "'\(path)' already exists") }
            throw failure("creating", path)
        }
        var closed = false
        defer { if !closed { close(descriptor) } }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return Glibc.write(descriptor, base + written, raw.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                let code = errno
                unlink(path)
                throw failure("writing", path, code)
            }
            written += result
        }
        guard !syncing || fsync(descriptor) == 0 else {
            let code = errno
            unlink(path)
            throw failure("syncing", path, code)
        }
        closed = true
        guard close(descriptor) == 0 else {
            let code = errno
            unlink(path)
            throw failure("closing", path, code)
        }
    }

    /// The device (`st_dev`) of the file system that holds `path`, or nil when it cannot be
    /// examined: files with the same device are made durable by one ``syncFileSystem(of:)``.
    package static func device(of path: String) -> UInt64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt64(info.st_dev)
    }

    /// The hidden temporary name next to `path` under which ``writeAtomically(_:_:mode:syncingDirectory:)``
    /// and ``writeTemporary(for:_:mode:)`` write before renaming: `.NAME.tmp-UUID`. Names that start
    /// with a dot are never taken for signatures or store entries, so one left by a crash is ignored.
    ///
    /// The random part comes from `getrandom(2)` (`SystemRandomNumberGenerator`): Foundation's
    /// `UUID()` opens, reads and closes `/dev/urandom` on every call, which a batch paid per file.
    package static func temporaryPath(for path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        var random = SystemRandomNumberGenerator()
        let high = String(random.next() as UInt64, radix: 16, uppercase: true)
        let low = String(random.next() as UInt64, radix: 16, uppercase: true)
        let unique =
            String(repeating: "0", count: 16 - high.count) + high + String(repeating: "0", count: 16 - low.count) + low
        return (directory.isEmpty ? "." : directory) + "/.\(name)\(temporaryMarker)\(unique)"
    }

    /// What ``temporaryPath(for:)`` puts between the name and the random part.
    private static let temporaryMarker = ".tmp-"
    /// The number of upper-case hex digits of ``temporaryPath(for:)``'s random part.
    private static let temporaryDigits = 32

    /// The name of the file that `name` is a temporary of (``temporaryPath(for:)``: `.NAME.tmp-` and
    /// 32 upper-case hex digits), or nil when `name` is not of that exact pattern.
    package static func temporaryTarget(ofName name: String) -> String? {
        let bytes = Array(name.utf8)
        let suffixLength = temporaryMarker.utf8.count + temporaryDigits
        guard bytes.count > 1 + suffixLength, bytes[0] == UInt8(ascii: ".") else { return nil }
        let suffix = bytes[(bytes.count - suffixLength)...]
        guard suffix.starts(with: temporaryMarker.utf8),
            suffix.dropFirst(temporaryMarker.utf8.count).allSatisfy({
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46)
            })
        else { return nil }
        return String(bytes: bytes[1..<(bytes.count - suffixLength)], encoding: .utf8)
    }

    /// Where `d_name` starts in a `dirent`.
    private static let direntNameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!

    /// Removes the hidden temporary files (``temporaryPath(for:)``: `.NAME.tmp-` and 32 hex digits)
    /// that a killed writer left in `directory` for the files named in `names`, when they were last
    /// modified more than `age` ago; returns how many it removed.
    ///
    /// A writer keeps its temporary file only until it renames it (at most one batch group), so one
    /// that old was left by a process that died. Only regular files are removed, only names of the
    /// exact pattern, and only for `names`: what other programs keep in the directory is never
    /// touched. Best effort: a file that cannot be examined or removed stays, as it would have.
    package static func removeStaleTemporaries(
        in directory: String,
        for names: Set<String>,
        olderThan age: TimeInterval
    ) -> Int {
        guard !names.isEmpty, let stream = opendir(directory) else { return 0 }
        defer { closedir(stream) }
        let descriptor = dirfd(stream)
        let cutoff = Date().timeIntervalSince1970 - age
        var removed = 0
        while let entry = readdir(stream) {
            // The name is read where it lies, up to its NUL: glibc packs the entries at their own
            // length (`d_reclen`), so the last ones in readdir's buffer are shorter than a whole
            // `dirent`, and copying `entry.pointee.d_name` (all 256 bytes) read past the buffer's end
            // (a heap-buffer-overflow under ASan, in a directory of a few thousand signatures).
            let name = String(
                cString: UnsafeRawPointer(entry).advanced(by: direntNameOffset).assumingMemoryBound(to: CChar.self)
            )
            guard let target = temporaryTarget(ofName: name), names.contains(target) else { continue }
            var info = stat()
            guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG,
                age <= 0 || Double(info.st_mtim.tv_sec) < cutoff
            else { continue }
            if unlinkat(descriptor, name, 0) == 0 { removed += 1 }
        }
        return removed
    }

    /// The first step of ``writeAtomically(_:_:mode:syncingDirectory:)`` split out for a group of
    /// files made durable together: writes `bytes` to a new hidden temporary file next to `path`
    /// (see ``temporaryPath(for:)``) WITHOUT `fsync`, and returns its path. The caller then makes the
    /// data durable (``syncFileSystem(of:)``) before ``renameIntoPlace(_:_:)``, so a final name only
    /// ever appears for bytes that are on the device; a crash in between leaves only the hidden file.
    /// - Throws: `.fileSystem` naming `path` (nothing is left behind).
    package static func writeTemporary(for path: String, _ bytes: [UInt8], mode: mode_t = 0o600) throws -> String {
        let temporary = temporaryPath(for: path)
        do {
            try writeNewFile(temporary, bytes, mode: mode, syncing: false)
        } catch let error as CertificateProviderError {
            throw CertificateProviderError(error.code, "cannot write \(path): \(error.reason)")
        }
        return temporary
    }

    /// Renames a temporary file (from ``writeTemporary(for:_:mode:)``) over `path`, atomically
    /// replacing what was there; on failure the temporary file is removed.
    /// - Throws: `.fileSystem` naming both paths.
    package static func renameIntoPlace(_ temporary: String, _ path: String) throws {
        guard Glibc.rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw failure("renaming '\(temporary)' to", path, code)
        }
    }

    /// `fsync`s a directory so that a rename or create inside it is durable.
    package static func syncDirectory(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("opening the directory", path) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 || errno == EINVAL else { throw failure("syncing the directory", path) }
    }

    /// `rename(2)`; a non-empty directory at `to` gives `.alreadyExists`.
    package static func rename(_ from: String, _ to: String) throws {
        guard Glibc.rename(from, to) == 0 else {
            if errno == ENOTEMPTY || errno == EEXIST {
                throw CertificateProviderError(.alreadyExists, "'\(to)' already exists")
            }
            throw failure("renaming '\(from)' to", to)
        }
    }

    /// `link(2)`: makes `to` appear atomically, failing with `.alreadyExists` when it exists.
    package static func link(_ from: String, _ to: String) throws {
        guard Glibc.link(from, to) == 0 else {
            if errno == EEXIST {
                throw CertificateProviderError(
                    .alreadyExists,
                    "'\(to)' already exists; choose another file name or remove it first"
                )
            }
            throw failure("creating", to)
        }
    }

    /// The contents of a regular file, or nil when it cannot be read.
    package static func read(_ path: String) -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return Array(data)
    }

    /// Replaces (or creates) the file at `path` atomically with `bytes`, with `mode` (default 0600;
    /// the umask applies): a new file in the same directory is written and `fsync`ed, renamed over
    /// `path`, and the directory is synced. A crash leaves the old contents or the new, never a mix
    /// (at most a hidden `.NAME.tmp-UUID` file next to it).
    ///
    /// With `syncingDirectory` false the directory sync is left to the caller, who makes many files
    /// in one directory and syncs it once (``syncDirectory(_:)``) before it acknowledges any of them:
    /// until then a crash of the machine (not of the process) may forget the rename, never tear a file.
    package static func writeAtomically(
        _ path: String,
        _ bytes: [UInt8],
        mode: mode_t = 0o600,
        syncingDirectory: Bool = true
    ) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = temporaryPath(for: path)
        do {
            try writeNewFile(temporary, bytes, mode: mode)
        } catch let error as CertificateProviderError {
            throw CertificateProviderError(error.code, "cannot write \(path): \(error.reason)")
        }
        try renameIntoPlace(temporary, path)
        if syncingDirectory { try syncDirectory(directory.isEmpty ? "." : directory) }
    }

    /// Refuses a directory that holds secrets when another user owns it or may write in it (as ssh
    /// refuses such a `~/.ssh`): another user could swap its files. A missing directory passes.
    /// - Parameters:
    ///   - path: the directory.
    ///   - what: how messages name it (`the identity store`).
    /// - Throws: `.fileSystem` saying what is wrong and the command that fixes it.
    package static func checkPrivateDirectory(_ path: String, what: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if (info.st_mode & S_IFMT) == S_IFLNK {
            // A link the user made to their own directory is fine; judge the directory it names.
            guard stat(path, &info) == 0 else { return }
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw CertificateProviderError(.fileSystem, "\(what) '\(path)' is not a directory")
        }
        if info.st_uid != geteuid() {
            throw CertificateProviderError(
                .fileSystem,
                "\(what) '\(path)' belongs to another user (uid \(info.st_uid)), who could replace what it holds; it "
                    + "is not used. Fix: chown \(geteuid()) '\(path)' (or move it away)"
            )
        }
        if (info.st_mode & 0o022) != 0 {
            throw CertificateProviderError(
                .fileSystem,
                "\(what) '\(path)' can be written by other users (mode \(String(info.st_mode & 0o777, radix: 8))), "
                    + "who could replace what it holds; it is not used. Fix: chmod go-w '\(path)'"
            )
        }
    }

    /// Whether a file holding a secret (a session, a cache) may be trusted: a regular file (not a
    /// link), owned by this user and not readable or writable by others. Returns nil when it may,
    /// else why not; a missing file gives nil.
    package static func untrustedFileReason(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return "it is not a regular file" }
        guard info.st_uid == geteuid() else { return "it belongs to another user (uid \(info.st_uid))" }
        guard (info.st_mode & 0o077) == 0 else {
            return "other users can read or write it (mode \(String(info.st_mode & 0o777, radix: 8)))"
        }
        return nil
    }

    /// An exclusive `flock(2)` on a lock file, held until ``release()``.
    package final class Lock {
        private var descriptor: Int32

        /// Opens (creating with 0600) and locks `path`, waiting for other holders.
        package init(path: String) throws {
            descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else { throw FileSystem.failure("opening the lock file", path) }
            while flock(descriptor, LOCK_EX) != 0 {
                if errno == EINTR { continue }
                let code = errno
                close(descriptor)
                throw FileSystem.failure("locking", path, code)
            }
        }

        /// Opens (creating with 0600) and locks `path` without waiting.
        /// - Returns: nil when another open file description holds the lock.
        package init?(tryingPath path: String) throws {
            descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else { throw FileSystem.failure("opening the lock file", path) }
            while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                if errno == EINTR { continue }
                let code = errno
                close(descriptor)
                descriptor = -1
                if code == EWOULDBLOCK { return nil }
                throw FileSystem.failure("locking", path, code)
            }
        }

        /// Replaces the lock file's content with `text` (who holds it, for the next one to name).
        package func record(_ text: String) {
            guard descriptor >= 0, ftruncate(descriptor, 0) == 0 else { return }
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }

        /// Unlocks and closes.
        package func release() {
            guard descriptor >= 0 else { return }
            _ = flock(descriptor, LOCK_UN)
            close(descriptor)
            descriptor = -1
        }

        deinit { release() }
    }
}
