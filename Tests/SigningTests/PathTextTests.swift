internal import Durability
import Foundation
import Testing

/// `PathText` gives the strings Foundation's file URLs give, without their file-system calls.
@Suite("PathText makes paths absolute as URL(fileURLWithPath:).standardizedFileURL does")
struct PathTextTests {
    /// Relative and absolute paths with dot segments, repeated and trailing slashes, spaces,
    /// Cyrillic and a path that climbs above the root.
    static let paths = [
        "договор.txt", "docs/a.txt", "./docs//a.txt", "docs/../b.txt", "../x/./y", "docs/", "/", "//", "/tmp",
        "/tmp/", "/tmp//a/./b/../c", "/../../etc/passwd", "/a/b/..", "a b/c d.pdf", ".", "..", "./", "a/./.",
        "/tmp/.hidden", "/tmp/..name", "/tmp/name..", "/tmp/...", "/tmp/a/.", "/a//b", "/a/b/",
    ]

    @Test("absolute(_:) matches Foundation for every sample path", arguments: paths)
    func absolute(path: String) {
        let expected = URL(fileURLWithPath: path).standardizedFileURL.path
        #expect(PathText.absolute(path) == expected)
    }

    @Test("directory(of:), lastComponent(_:) and joined(_:_:) match Foundation", arguments: paths)
    func components(path: String) {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        #expect(PathText.directory(of: path) == url.deletingLastPathComponent().standardizedFileURL.path)
        #expect(PathText.lastComponent(PathText.absolute(path)) == url.lastPathComponent)
        #expect(
            PathText.joined(path, "s.p7s")
                == URL(fileURLWithPath: path).appendingPathComponent("s.p7s").standardizedFileURL.path
        )
    }

    @Test("standard input keeps its name")
    func standardInput() {
        #expect(PathText.absolute("-") == "-")
    }
}
