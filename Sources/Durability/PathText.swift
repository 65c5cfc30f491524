internal import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// File paths as text: made absolute and standardized without asking the file system anything but
/// the current directory.
///
/// `URL(fileURLWithPath:)` stats the path to learn whether it is a directory, and its
/// `standardizedFileURL.path` goes through URL parsing and percent-encoding; for a command that
/// names thousands of files that was a fifth of its CPU. These give the same strings for file paths
/// (dot segments removed lexically, repeated and trailing slashes dropped, symbolic links not
/// resolved), as the tests check against Foundation.
package enum PathText {
    /// `path` made absolute against the current directory, with `.` and `..` segments and repeated
    /// or trailing slashes removed, as `URL(fileURLWithPath: path).standardizedFileURL.path` gives it.
    /// `-` (standard input or output) is returned unchanged.
    package static func absolute(_ path: String) -> String {
        if path == "-" { return path }
        if path.utf8.first == UInt8(ascii: "/") { return standardized(path) }
        let directory = currentDirectory()
        return standardized(path.isEmpty ? directory : directory + "/" + path)
    }

    /// The absolute `path` (see ``absolute(_:)``) with its last component removed: the directory
    /// that holds it (`/` for a file at the root).
    package static func directory(of path: String) -> String {
        let absolutePath = absolute(path)
        guard let slash = absolutePath.utf8.lastIndex(of: UInt8(ascii: "/")), slash != absolutePath.utf8.startIndex
        else { return "/" }
        return String(absolutePath[..<slash])
    }

    /// The last component of `path` (after its last slash, trailing slashes ignored).
    package static func lastComponent(_ path: String) -> String {
        let trimmed = path.utf8.count > 1 && path.hasSuffix("/") ? standardizedSlashes(path) : path
        guard let slash = trimmed.utf8.lastIndex(of: UInt8(ascii: "/")) else { return trimmed }
        let name = String(trimmed[trimmed.utf8.index(after: slash)...])
        return name.isEmpty ? "/" : name
    }

    /// `name` inside `directory`, absolute (see ``absolute(_:)``).
    package static func joined(_ directory: String, _ name: String) -> String {
        absolute(directory.hasSuffix("/") ? directory + name : directory + "/" + name)
    }

    /// An absolute path with `.` and `..` removed lexically and slashes collapsed.
    private static func standardized(_ path: String) -> String {
        if isStandardized(path) { return path }
        var components: [Substring] = []
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch component {
            case ".": continue
            case "..": if !components.isEmpty { components.removeLast() }
            default: components.append(component)
            }
        }
        return "/" + components.joined(separator: "/")
    }

    /// Whether an absolute path has nothing to standardize: no empty, `.` or `..` component and no
    /// trailing slash (most paths a command is given).
    private static func isStandardized(_ path: String) -> Bool {
        guard path.utf8.count > 1 else { return true }
        var length = 0
        var onlyDots = true
        func isNormalComponent() -> Bool { length > 0 && !(onlyDots && length <= 2) }
        for byte in path.utf8.dropFirst() {
            if byte == UInt8(ascii: "/") {
                guard isNormalComponent() else { return false }
                length = 0
                onlyDots = true
            } else {
                length += 1
                if byte != UInt8(ascii: ".") { onlyDots = false }
            }
        }
        return isNormalComponent()
    }

    /// `path` without repeated or trailing slashes (not made absolute).
    private static func standardizedSlashes(_ path: String) -> String {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        return (path.hasPrefix("/") ? "/" : "") + components.joined(separator: "/")
    }

    /// The current directory (`getcwd`; Foundation's answer when that fails).
    private static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return FileManager.default.currentDirectoryPath }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
