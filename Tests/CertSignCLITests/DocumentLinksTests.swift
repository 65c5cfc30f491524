import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// The README stays a page for users (at most 500 lines, the reference material in docs/),
/// and no link of the README, docs/*.md or BENCHMARKS.md leads nowhere: every relative link names a
/// file that exists and, with `#anchor`, a heading of that Markdown file.
@Suite struct DocumentLinksTests {
    /// The README's length limit.
    static let maximumReadmeLines = 500

    /// The relative link targets of `text` (`[text](target)`), without web links and mail addresses.
    static func relativeLinks(in text: String) -> [String] {
        text.matches(of: /\]\(([^)\s]+)\)/).map { String($0.output.1) }.filter { target in
            !target.contains("://") && !target.hasPrefix("mailto:")
        }
    }

    /// GitHub's anchor of a Markdown heading: lower-cased, punctuation dropped, spaces become hyphens.
    static func anchor(_ heading: String) -> String {
        String(
            heading.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                return character.isLetter || character.isNumber || character == "-" || character == "_"
                    ? character : nil
            }
        )
    }

    /// The anchors of every heading (`#`…`######`) of a Markdown text, outside fenced blocks.
    static func anchors(of text: String) -> Set<String> {
        var anchors: Set<String> = []
        var inFence = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("```") { inFence.toggle() }
            guard !inFence, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }
            guard title.hasPrefix(" ") else { continue }
            anchors.insert(anchor(title.trimmingCharacters(in: .whitespaces)))
        }
        return anchors
    }

    /// What is wrong with each link of the document at `path` (relative to `root`).
    static func brokenLinks(of path: String, root: URL = ReadmeTests.root) throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        let folder = root.appendingPathComponent(path).deletingLastPathComponent()
        var broken: [String] = []
        for link in relativeLinks(in: text) {
            let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let target = parts[0].isEmpty ? root.appendingPathComponent(path) : folder.appendingPathComponent(parts[0])
            guard FileManager.default.fileExists(atPath: target.standardizedFileURL.path) else {
                broken.append("\(path): \(link) (no such file)")
                continue
            }
            if parts.count == 2, target.pathExtension == "md" {
                let headings = anchors(of: try String(contentsOf: target, encoding: .utf8))
                if !headings.contains(parts[1]) { broken.append("\(path): \(link) (no such heading)") }
            }
        }
        return broken
    }

    @Test func readmeIsAtMost500Lines() {
        let lines = ReadmeTests.readme.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        #expect(lines > 100, "README.md was not read")
        #expect(lines <= Self.maximumReadmeLines, "README.md has \(lines) lines; move reference material to docs/")
    }

    @Test func everyRelativeLinkLeadsToAFileAndHeading() throws {
        let documents = ["README.md", "BENCHMARKS.md"] + (try ReadmeTests.docs())
        #expect(documents.count >= 6, "docs/ holds \(documents.count - 2) documents")
        var checked = 0
        for document in documents {
            #expect(try Self.brokenLinks(of: document) == [])
            checked += Self.relativeLinks(in: ReadmeTests.document(document)).count
        }
        // The README links each focused document, so none is orphaned.
        for document in try ReadmeTests.docs() {
            #expect(ReadmeTests.readme.contains("](\(document)"), "README.md does not link \(document)")
        }
        #expect(checked >= 15)
    }

    @Test("the check can fail: a missing file and a missing heading are caught")
    func checkCatchesBrokenLinks() throws {
        #expect(
            Self.anchor("CSC API v2: remote signing against the emulator")
                == "csc-api-v2-remote-signing-against-the-emulator"
        )
        #expect(Self.anchor("JSON output (`--json`)") == "json-output---json")
        let directory = try TemporaryDirectory(prefix: "links")
        try FileManager.default.createDirectory(
            at: directory.url.appendingPathComponent("docs"),
            withIntermediateDirectories: true
        )
        _ = try directory.write("docs/A.md", text: "# Title\n```\n# not a heading\n```\n[up](../README.md#top)\n")
        _ = try directory.write(
            "README.md",
            text:
                "# Top\n[w](https://example.com) [a](docs/A.md#title) [b](docs/GONE.md) [c](docs/A.md#not-a-heading) [d](#top)\n"
        )
        #expect(
            try Self.brokenLinks(of: "README.md", root: directory.url)
                == ["README.md: docs/GONE.md (no such file)", "README.md: docs/A.md#not-a-heading (no such heading)"]
        )
        #expect(try Self.brokenLinks(of: "docs/A.md", root: directory.url) == [])
    }
}
