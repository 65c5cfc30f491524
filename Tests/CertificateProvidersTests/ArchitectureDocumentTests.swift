import CertificateProvidersTesting
import Foundation
import TestSupport
import Testing

/// docs/ARCHITECTURE.md draws the module graph a newcomer reads first: every Swift target of
/// Sources/ and Providers/ with its direct dependencies, as `swift package dump-package` gives them.
/// A target added, removed or rewired without the document fails here.
@Suite struct ArchitectureDocumentTests {
    /// One target's name and its direct dependencies, sorted.
    struct Edge: Hashable, CustomStringConvertible {
        let target: String
        let dependencies: [String]
        var description: String { "\(target) -> \(dependencies.joined(separator: ", "))" }
    }

    /// The Swift targets outside Tests/ and their dependencies, from the manifest itself.
    static func manifestGraph() throws -> Set<Edge> {
        let manifest = try PackageRoot.manifest()
        let targets = try #require(manifest["targets"] as? [[String: Any]])
        var edges = Set<Edge>()
        for target in targets {
            let name = try #require(target["name"] as? String)
            let type = target["type"] as? String ?? ""
            let path = target["path"] as? String ?? "Sources/\(name)"
            guard type != "test", type != "system", !path.hasPrefix("Tests"), isSwift(path) else { continue }
            let dependencies = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                ["byName", "target", "product"].lazy.compactMap { (dependency[$0] as? [Any])?.first as? String }.first
            }
            edges.insert(Edge(target: name, dependencies: dependencies.sorted()))
        }
        return edges
    }

    /// Whether the target's folder holds Swift sources (the C shims hold C).
    static func isSwift(_ path: String) -> Bool {
        let folder = PackageRoot.url.appendingPathComponent(path)
        guard let walker = FileManager.default.enumerator(atPath: folder.path) else { return false }
        return walker.contains { ($0 as? String)?.hasSuffix(".swift") == true }
    }

    /// The `A -> B, C` lines of the document's first `text` block.
    static func documentGraph() throws -> Set<Edge> {
        let text = try String(
            contentsOf: PackageRoot.url.appendingPathComponent("docs/ARCHITECTURE.md"),
            encoding: .utf8
        )
        let block = try #require(text.firstMatch(of: /```text\n(?<lines>[\s\S]*?)```/)).output.lines
        return Set(
            block.split(separator: "\n").map { line in
                let parts = line.split(separator: "->", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                let dependencies = parts.count > 1 ? parts[1].split(separator: ",") : []
                return Edge(
                    target: parts[0],
                    dependencies: dependencies.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                        .sorted()
                )
            }
        )
    }

    @Test("docs/ARCHITECTURE.md lists every target of the manifest with exactly its dependencies")
    func theDocumentDrawsTheManifest() throws {
        let manifest = try Self.manifestGraph()
        let document = try Self.documentGraph()
        #expect(manifest.count > 20, "the manifest's targets were not read: \(manifest)")
        let missing = manifest.subtracting(document).sorted { $0.target < $1.target }
        let stale = document.subtracting(manifest).sorted { $0.target < $1.target }
        #expect(missing.isEmpty, "targets missing from docs/ARCHITECTURE.md, or with other arrows there: \(missing)")
        #expect(stale.isEmpty, "docs/ARCHITECTURE.md has arrows the manifest does not: \(stale)")
    }

    @Test(
        "Validation and CMS reach neither the journal nor SQLite nor libpq; Signing not PostgreSQL; JSON and HTTPClient not the core"
    )
    func verifyingLinksNoJournal() throws {
        let graph = Dictionary(uniqueKeysWithValues: try Self.manifestGraph().map { ($0.target, $0.dependencies) })
        func closure(of target: String) -> Set<String> {
            var seen = Set<String>()
            var queue = [target]
            while let next = queue.popLast() {
                for dependency in graph[next] ?? [] where seen.insert(dependency).inserted { queue.append(dependency) }
            }
            return seen
        }
        for module in ["CMS", "Validation"] {
            let reached = closure(of: module)
            #expect(reached.isDisjoint(with: ["SignatureJournal", "SignatureJournalPostgres", "CSQLite", "CPostgres"]))
        }
        #expect(!closure(of: "Signing").contains("CPostgres"))
        #expect(!closure(of: "SignatureJournal").contains("CPostgres"))
        #expect(!closure(of: "JSON").contains("CertificateProviders"), "JSON is a leaf with its own error")
        #expect(!closure(of: "HTTPClient").contains("CertificateProviders"), "HTTPClient is a leaf with its own error")
        #expect(!closure(of: "HTTPClient").contains("Durability"), "HTTPClient reads its CA file itself")
    }

    @Test("The public core reaches OpenSSL only through OpenSSLWrappers: no file of it imports a COpenSSL module")
    func theCoreImportsNoOpenSSL() throws {
        let folder = PackageRoot.url.appendingPathComponent("Sources/CertificateProviders")
        let files = try #require(FileManager.default.enumerator(atPath: folder.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count > 20, "the core's sources were not found under \(folder.path)")
        var importing: [String] = []
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            // Any access level or attribute before `import`, and the shims module as well.
            let imports = text.split(separator: "\n").contains {
                $0.contains(/^\s*(@\w+\s+)*(\w+\s+)?import\s+COpenSSL/)
            }
            if imports { importing.append(file) }
        }
        #expect(importing.isEmpty, "Sources/CertificateProviders files importing COpenSSL: \(importing.sorted())")
    }

    @Test(
        "OpenSSLWrappers is package-only, depends on no module of this package, and is (with Secrets on it and the leaf CodedErrors) all the core depends on"
    )
    func theWrappersSitUnderTheCore() throws {
        let graph = Dictionary(uniqueKeysWithValues: try Self.manifestGraph().map { ($0.target, $0.dependencies) })
        #expect(graph["CertificateProviders"] == ["CodedErrors", "OpenSSLWrappers", "Secrets"])
        #expect(graph["CodedErrors"] == [], "CodedErrors is a leaf")
        #expect(graph["Secrets"] == ["OpenSSLWrappers"])
        let wrappers = try #require(graph["OpenSSLWrappers"])
        #expect(wrappers.allSatisfy { $0.hasPrefix("C") && graph[$0] == nil }, "OpenSSLWrappers -> \(wrappers)")
        let products = try #require(try PackageRoot.manifest()["products"] as? [[String: Any]])
        let productTargets = products.flatMap { $0["targets"] as? [String] ?? [] }
        #expect(!productTargets.contains("OpenSSLWrappers"), "OpenSSLWrappers must not be a product")
    }

    @Test(
        "The CLI names no provider: no CertSignCLI source imports a provider module, nor does its target depend on one"
    )
    func theCLIReachesProvidersThroughBuiltInProviders() throws {
        let manifest = try PackageRoot.manifest()
        let targets = try #require(manifest["targets"] as? [[String: Any]])
        let providers = Set(
            targets.compactMap { target in
                (target["path"] as? String)?.hasPrefix("Providers/") == true ? target["name"] as? String : nil
            }
        )
        #expect(providers.count >= 7, "the provider targets were not read from the manifest: \(providers)")
        let folder = PackageRoot.url.appendingPathComponent("Sources/CertSignCLI")
        let files = try #require(FileManager.default.enumerator(atPath: folder.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count > 20, "the CLI's sources were not found under \(folder.path)")
        var importing: [String] = []
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            // Any access level or attribute before `import`.
            let modules = text.split(separator: "\n").compactMap {
                $0.firstMatch(of: /^\s*(@\w+\s+)*(\w+\s+)?import\s+(?<module>\w+)/).map { String($0.output.module) }
            }
            importing += modules.filter(providers.contains).map { "\(file): \($0)" }
        }
        #expect(importing.isEmpty, "CertSignCLI files importing a provider module: \(importing.sorted())")
        let graph = Dictionary(uniqueKeysWithValues: try Self.manifestGraph().map { ($0.target, $0.dependencies) })
        let cli = try #require(graph["CertSignCLI"])
        #expect(providers.isDisjoint(with: cli), "CertSignCLI depends on \(providers.intersection(cli).sorted())")
        #expect(cli.contains("BuiltInProviders"))
    }
}
