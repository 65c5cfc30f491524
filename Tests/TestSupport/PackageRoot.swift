import CertificateProvidersTesting
public import Foundation
import Testing

/// The package's own directory (the one holding Package.swift), for tests that read its documents
/// and manifest.
public enum PackageRoot {
    /// The directory holding Package.swift above this file.
    public static let url: URL = {
        var directory = URL(fileURLWithPath: #filePath)
        while directory.path != "/" {
            directory.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                return directory
            }
        }
        return directory
    }()

    /// The manifest as `swift package dump-package` prints it (in a scratch path of its own, so a
    /// build of the package is not disturbed).
    public static func manifest() throws -> [String: Any] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("dump-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let dump = try ExternalTool.run(
            "swift",
            ["package", "--scratch-path", scratch.path, "dump-package"],
            directory: url
        ).requireSuccess()
        return try #require(try JSONSerialization.jsonObject(with: dump.standardOutput) as? [String: Any])
    }
}
