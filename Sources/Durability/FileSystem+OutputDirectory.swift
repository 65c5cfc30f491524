internal import CertificateProviders
internal import Foundation

extension FileSystem {
    /// Creates an output folder the user named (`--out-dir`) with its missing parents; an existing
    /// one is used as it is.
    /// - Parameter option: how the user named it, for the message (`--out-dir`).
    /// - Throws: `.fileSystem` when it exists and is not a directory, or cannot be created.
    package static func makeOutputDirectory(_ path: String, option: String = "--out-dir") throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw CertificateProviderError(.fileSystem, "\(option) \(path) exists and is not a directory")
            }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw CertificateProviderError(
                .fileSystem,
                "cannot create the \(option) folder \(path): \(error.localizedDescription)"
            )
        }
    }
}
