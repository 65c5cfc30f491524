import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// Every Swift snippet of the README, docs/*.md, the providers' READMEs and the DocC articles compiles as an app
/// would write it: the fenced `swift` blocks of one document, in order (a reader reads them in order,
/// and a later block may use what an earlier one declared), type-checked by `swiftc` against the modules
/// this build made, importing nothing but this package's products and the toolchain's own modules.
@Suite struct DocumentationSnippetTests {
    /// Modules a snippet may import besides this package's products.
    static let toolchainModules: Set<String> = ["Foundation", "Synchronization", "Dispatch", "Testing"]

    /// The pkg-config names of the C libraries the products' system-library targets use, read from
    /// Package.swift (`pkgConfig: "…"`), so a new system library cannot be forgotten here.
    static var cLibraries: [String] {
        get throws {
            let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
            return manifest.matches(of: /pkgConfig: "([^"]+)"/).map { String($0.output.1) }
        }
    }

    /// The package root (the directory holding Package.swift).
    static let root: URL = PackageRoot.url

    /// The library products Package.swift declares (`.library(name: "…"`).
    static func products() throws -> Set<String> {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let pattern = try Regex(#"\.library\(name: "([A-Za-z0-9_]+)""#)
        return Set(manifest.matches(of: pattern).compactMap { $0.output[1].substring.map(String.init) })
    }

    /// The documents whose snippets must compile.
    static func documents() throws -> [URL] {
        let manager = FileManager.default
        var documents = [root.appendingPathComponent("README.md")]
        for folder in ["Providers", "Sources", "docs"] {
            let base = root.appendingPathComponent(folder)
            guard let walker = manager.enumerator(at: base, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walker where url.pathExtension == "md" {
                let inDocC = url.deletingLastPathComponent().pathExtension == "docc"
                if inDocC || folder == "docs" || (folder == "Providers" && url.lastPathComponent == "README.md") {
                    documents.append(url)
                }
            }
        }
        return documents.sorted { $0.path < $1.path }
    }

    /// The fenced `swift` blocks of `text`, joined in order.
    static func snippets(of text: String) -> String? {
        var blocks: [String] = []
        var current: [Substring]?
        var inOtherFence = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if let open = current {
                    blocks.append(open.joined(separator: "\n"))
                    current = nil
                } else if inOtherFence {
                    inOtherFence = false
                } else if line.dropFirst(3).trimmingCharacters(in: .whitespaces) == "swift" {
                    current = []
                } else {
                    inOtherFence = true
                }
            } else if current != nil {
                current?.append(line)
            }
        }
        return blocks.isEmpty ? nil : blocks.joined(separator: "\n\n")
    }

    /// The modules `source` imports (`import X`, `public import X`, `@testable import X`).
    static func imports(of source: String) -> [String] {
        source.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
            guard let index = words.firstIndex(of: "import"), index <= 1, index + 1 < words.count else { return nil }
            return String(words[index + 1])
        }
    }

    /// The build directory of this test binary (the one holding `Modules/`).
    static func buildDirectory() throws -> URL {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        for _ in 0..<5 {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Modules").path) {
                return directory
            }
            directory.deleteLastPathComponent()
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Modules/ above \(executable)"])
    }

    /// `swiftc -typecheck` of `source` against this build's modules (and the C modules they use).
    static func typecheck(_ source: String, named name: String) throws -> ExternalTool.Result {
        let build = try buildDirectory()
        let directory = try TemporaryDirectory(prefix: "snippets")
        let file = try directory.write(name + ".swift", text: source)
        var arguments = ["-typecheck", "-swift-version", "6", "-I", build.appendingPathComponent("Modules").path]
        let manager = FileManager.default
        for entry in try manager.contentsOfDirectory(atPath: build.path) where entry.hasSuffix(".build") {
            let map = build.appendingPathComponent(entry).appendingPathComponent("module.modulemap")
            if manager.fileExists(atPath: map.path) { arguments += ["-Xcc", "-fmodule-map-file=\(map.path)"] }
        }
        let sources = root.appendingPathComponent("Sources")
        for entry in try manager.contentsOfDirectory(atPath: sources.path) where entry.hasPrefix("C") {
            let map = sources.appendingPathComponent(entry).appendingPathComponent("module.modulemap")
            if manager.fileExists(atPath: map.path) { arguments += ["-Xcc", "-fmodule-map-file=\(map.path)"] }
            let include = sources.appendingPathComponent(entry).appendingPathComponent("include")
            if manager.fileExists(atPath: include.path) { arguments += ["-Xcc", "-I\(include.path)"] }
        }
        // The C libraries' headers where pkg-config finds them (as SwiftPM's system-library targets do).
        let headers = try ExternalTool.run("pkg-config", ["--cflags-only-I"] + (try Self.cLibraries))
        for flag in headers.output.split(whereSeparator: \.isWhitespace) { arguments += ["-Xcc", String(flag)] }
        return try ExternalTool.run("swiftc", arguments + [file], directory: directory.url)
    }

    @Test("every Swift snippet of the documentation type-checks against the products", .timeLimit(.minutes(5)))
    func snippetsCompile() throws {
        let products = try Self.products()
        #expect(products.contains("CertificateProviders") && products.contains("CertificateProvidersTesting"))
        var checked = 0
        let documents = try Self.documents()
        #expect(documents.contains { $0.path.hasPrefix(Self.root.appendingPathComponent("docs").path + "/") })
        for document in documents {
            let text = try String(contentsOf: document, encoding: .utf8)
            guard let source = Self.snippets(of: text) else { continue }
            let relative = String(document.path.dropFirst(Self.root.path.count + 1))
            for module in Self.imports(of: source) {
                #expect(
                    products.contains(module) || Self.toolchainModules.contains(module),
                    "\(relative) imports \(module), which is not a product of this package"
                )
            }
            let result = try Self.typecheck(source, named: relative.replacingOccurrences(of: "/", with: "_"))
            #expect(result.succeeded, "\(relative) does not compile:\n\(result.errorOutput)")
            checked += 1
        }
        #expect(checked >= 5, "only \(checked) documents with Swift snippets were found")
    }

    @Test("the check can fail: a snippet with a type error or a non-product import is caught")
    func checkCatchesErrors() throws {
        let broken = try Self.typecheck(
            "import CertificateProviders\nlet secret: Secret = \"not a secret\"\n",
            named: "broken"
        )
        #expect(!broken.succeeded && broken.errorOutput.contains("error:"))
        let products = try Self.products()
        let imported = Self.imports(of: "import OpenSSLWrappers\n@testable import Signing\n")
        #expect(imported == ["OpenSSLWrappers", "Signing"])
        #expect(!products.contains("OpenSSLWrappers"))
        let snippet = Self.snippets(of: "a\n```sh\nls\n```\n```swift\nlet a = 1\n```\n```swift\nlet b = a\n```\n")
        #expect(snippet == "let a = 1\n\nlet b = a")
    }

    @Test("the README's dependency example is one a reader can use and lists every product its snippets import")
    func dependencyExample() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(!readme.contains("github.com/example"), "a placeholder repository URL")
        let example = try #require(
            readme.components(separatedBy: "```").first { $0.contains("// Package.swift of an app") },
            "the README has no Package.swift example"
        )
        #expect(example.contains(".package(path: \"../swift-certificate-providers\")"))
        #expect(example.contains("import SignatureJournal"))
        let listed = Set(example.matches(of: /\.product\(name: "([A-Za-z0-9_]+)"/).map { String($0.output.1) })
        let imported = Set(Self.imports(of: Self.snippets(of: readme) ?? "")).subtracting(Self.toolchainModules)
        #expect(
            imported.subtracting(listed).isEmpty,
            "imported but not in the example: \(imported.subtracting(listed))"
        )
        #expect(listed.contains("SignatureJournal"), "an app that opens a journal depends on SignatureJournal")
    }
}
