import CertificateProviders
internal import Durability
import Foundation

/// The files a command reads and writes, with errors that name the path and what is wrong with it.
extension CommandContext {
    /// Reads an input file, with errors that say what is wrong with the path.
    func readInputFile(_ path: String, what: String) throws -> [UInt8] {
        try FileSystem.readInputFile(path, what: what)
    }

    /// Creates an output folder (`--out-dir`) with its missing parents; an existing one is used.
    /// - Throws: `.fileSystem` when it exists and is not a directory, or cannot be created.
    func makeOutputDirectory(_ path: String) throws { try FileSystem.makeOutputDirectory(path) }

    /// Checks that `path` is a regular file this process can open, and returns its size.
    /// - Throws: `.fileSystem` saying whether it is missing, a directory, or unreadable (and why).
    func checkReadableFile(_ path: String, what: String) throws -> Int64 {
        try FileSystem.checkReadableFile(path, what: what)
    }
}
