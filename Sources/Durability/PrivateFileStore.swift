internal import CertificateProviders
package import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One private file holding a `Codable` value, the one way this package keeps a session or cache on
/// disk (the FMP session, the CryptoPro DSS cache): a JSON document, mode 0600 in a private directory (0700 when created here), replaced atomically
/// (a unique temporary file, fsynced, renamed), and an exclusive `flock(2)` on a lock file beside
/// it (`.<name>.lock`) that callers hold around a read-modify-write, taken without blocking a
/// thread (polled every 10 ms).
///
/// A file that is not a regular file of this user, or that others can read or write, is never
/// read (a planted or foreign session): ``load(decoder:)`` tells the `warning` callback and answers
/// nil. The value is the provider's own `Codable` type; the file knows nothing of what it holds.
package struct PrivateFileStore<Value: Codable & Sendable>: Sendable {
    /// What the file is and what to do about a bad one, for messages.
    package struct Wording: Sendable {
        /// The file as a noun phrase: "the FMP session", "the CryptoPro DSS cache".
        package var name: String
        /// What to do about a file that is ignored: "delete it and log in again".
        package var ignoredAdvice: String
        /// What to do about a damaged file: "delete it".
        package var damagedAdvice: String

        /// Creates the wording; see the properties.
        package init(name: String, ignoredAdvice: String, damagedAdvice: String) {
            self.name = name
            self.ignoredAdvice = ignoredAdvice
            self.damagedAdvice = damagedAdvice
        }
    }

    /// The directory that holds the file.
    package let directory: URL
    /// The file's name (`fmp-session.json`).
    package let fileName: String
    /// How messages name it.
    package let wording: Wording
    /// Told when a file is ignored.
    package let warning: (@Sendable (String) -> Void)?

    /// Creates the handle; nothing is read or written.
    package init(directory: URL, fileName: String, wording: Wording, warning: (@Sendable (String) -> Void)?) {
        self.directory = directory
        self.fileName = fileName
        self.wording = wording
        self.warning = warning
    }

    /// The file.
    package var fileURL: URL { directory.appendingPathComponent(fileName) }

    /// `.<name without .json>.lock` beside the file.
    package var lockPath: String {
        let stem = fileName.hasSuffix(".json") ? String(fileName.dropLast(5)) : fileName
        return directory.appendingPathComponent(".\(stem).lock").path
    }

    /// The stored value, or nil when there is no file or it is not trusted.
    /// - Throws: `.storeCorrupted` when the file does not decode as `Value`.
    package func load(decoder: JSONDecoder = JSONDecoder()) throws -> Value? {
        if let reason = FileSystem.untrustedFileReason(fileURL.path) {
            warning?("ignoring \(wording.name) \(fileURL.path): \(reason); \(wording.ignoredAdvice)")
            return nil
        }
        guard let bytes = FileSystem.read(fileURL.path) else { return nil }
        do {
            return try decoder.decode(Value.self, from: Data(bytes))
        } catch {
            throw CertificateProviderError(
                .storeCorrupted,
                "\(wording.name) \(fileURL.path) is damaged or not a file of this provider; \(wording.damagedAdvice)"
            )
        }
    }

    /// Writes `value` atomically with mode 0600 (the directory made private first). Call under
    /// ``withLock(_:)`` when the write depends on what the file held.
    /// - Throws: `.fileSystem` naming the path.
    package func write(_ value: Value, encoder: JSONEncoder) throws {
        let bytes: [UInt8]
        do { bytes = Array(try encoder.encode(value)) } catch {
            throw CertificateProviderError(.fileSystem, "cannot encode \(wording.name)")
        }
        try FileSystem.makePrivateDirectory(directory.path)
        try FileSystem.writeAtomically(fileURL.path, bytes)
    }

    /// Removes the file; no-op when absent.
    /// - Throws: `.fileSystem` when it exists and cannot be removed.
    package func delete() throws {
        if unlink(fileURL.path) != 0, errno != ENOENT { throw FileSystem.failure("removing", fileURL.path) }
    }

    /// Runs `body` holding the file's lock (other processes and tasks wait; no thread blocks).
    /// - Throws: `.fileSystem` when the lock file cannot be opened or locked; what `body` throws.
    package func withLock<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        try FileSystem.makePrivateDirectory(directory.path)
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw FileSystem.failure("opening the lock file", lockPath) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { throw FileSystem.failure("locking", lockPath) }
            try await Task.sleep(for: .milliseconds(10))
        }
        defer { flock(descriptor, LOCK_UN) }
        return try await body()
    }
}
