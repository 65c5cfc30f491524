public import Foundation

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
}
