import CertificateProviders
import Foundation
import Glibc

/// Reads files in chunks with POSIX calls: flat memory, cancellation between chunks.
package enum FileDigest {
    /// The default read size for streamed files (1 MiB).
    package static let defaultChunkSize = 1 << 20

    /// A file's digest and size.
    package struct Result: Sendable {
        /// The digest of the whole file.
        package let digest: [UInt8]
        /// Its size in bytes.
        package let size: Int64
    }

    /// Hashes a file chunk by chunk.
    /// - Throws: `.fileSystem`, `.cancelled`.
    package static func compute(
        url: URL,
        algorithm: DigestAlgorithm,
        chunkSize: Int,
        progress: SigningProgress?
    ) async throws -> Result {
        var hasher = DigestAlgorithm.Hasher(algorithm)
        let size = try await forEachChunk(url: url, chunkSize: chunkSize, progress: progress) { hasher.update($0) }
        return Result(digest: hasher.finalize(), size: size)
    }

    /// Reads a whole file of at most `limit` bytes.
    /// - Throws: `.invalidParameter` over the limit, `.fileSystem`, `.cancelled`.
    package static func read(url: URL, limit: Int64, chunkSize: Int, progress: SigningProgress?) async throws -> [UInt8]
    {
        let size = try fileSize(url)
        guard size <= limit else {
            throw CertificateProviderError.invalidParameter(
                "'\(url.lastPathComponent)' has \(size) bytes; attached signatures are limited to \(limit) bytes, "
                    + "use a detached signature"
            )
        }
        var content: [UInt8] = []
        content.reserveCapacity(Int(size))
        _ = try await forEachChunk(url: url, chunkSize: chunkSize, progress: progress) {
            content.append(contentsOf: $0)
        }
        return content
    }

    /// The size of a regular file.
    package static func fileSize(_ url: URL) throws -> Int64 {
        var info = stat()
        guard stat(url.path, &info) == 0 else { throw fileError("cannot read", url) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw CertificateProviderError(.fileSystem, "'\(url.path)' is not a regular file")
        }
        return Int64(info.st_size)
    }

    private static func forEachChunk(
        url: URL,
        chunkSize: Int,
        progress: SigningProgress?,
        _ body: (UnsafeRawBufferPointer) -> Void
    ) async throws -> Int64 {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw fileError("cannot open", url) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw fileError("cannot read", url) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw CertificateProviderError(.fileSystem, "'\(url.path)' is not a regular file")
        }
        let total = Int64(info.st_size)
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_SEQUENTIAL)
        // A small file gets a buffer of its size (one read and the end), not a whole chunk: allocating
        // and touching a 1 MiB buffer cost more than reading a 1 KiB document.
        let fitting = (Int(clamping: total) / 4096 + 1) * 4096
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: max(4096, min(chunkSize, fitting)),
            alignment: 4096
        )
        defer { buffer.deallocate() }
        var done: Int64 = 0
        while true {
            if Task.isCancelled {
                throw CertificateProviderError(.cancelled, "signing '\(url.lastPathComponent)' was cancelled")
            }
            let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw fileError("cannot read", url)
            }
            if count == 0 { break }
            body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            done += Int64(count)
            progress?(done, max(total, done))
        }
        if done == 0 { progress?(0, 0) }
        return done
    }

    package static func fileError(_ action: String, _ url: URL) -> CertificateProviderError {
        CertificateProviderError(.fileSystem, "\(action) '\(url.path)': \(String(cString: strerror(errno)))")
    }
}
