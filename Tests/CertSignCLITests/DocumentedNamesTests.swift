import BuiltInProviders
import CertificateProviders
import Foundation
import Testing

@testable import CertSignCLI

/// The documents cannot name what does not exist: every `certsign …` command line in README.md,
/// docs/*.md and the providers' READMEs (shell blocks and inline code) uses only options its command
/// declares (the declarations `--help` and the man page are made from), every inline `--option` is
/// one of some command, and every provider parameter a document names (`--param KEY=…`, or a name
/// that extends a parameter's name) is declared by a provider's schema.
@Suite struct DocumentedNamesTests {
    /// The documents checked, by path from the package root.
    static func documents() throws -> [String] {
        let providers = try FileManager.default.contentsOfDirectory(
            atPath: ReadmeTests.root.appendingPathComponent("Providers").path
        ).sorted().map { "Providers/\($0)/README.md" }.filter {
            FileManager.default.fileExists(atPath: ReadmeTests.root.appendingPathComponent($0).path)
        }
        return ["README.md"] + (try ReadmeTests.docs()) + providers
    }

    /// Every parameter name some built-in provider declares, and per provider ID its own.
    static let parameters: [String: Set<String>] = Dictionary(
        uniqueKeysWithValues: BuiltInProviders.all.map { provider in
            (provider.id.rawValue, Set(provider.schema.parameters.map(\.key.rawValue)))
        }
    )
    static let allParameters = parameters.values.reduce(into: Set<String>()) { $0.formUnion($1) }
    static let globalOptions = Set(Invocation.globalOptions.map(\.name) + ["-h"])
    static let allOptions = Commands.all.reduce(into: globalOptions) { $0.formUnion($1.options.map(\.name)) }

    /// The code of a document: shell blocks with continuation lines joined, and inline code spans.
    static func codeLines(_ text: String) -> [String] {
        var lines: [String] = []
        var inShell = false
        var inFence = false
        var pending = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                inShell = !inFence && ["sh", "bash"].contains(line.dropFirst(3).trimmingCharacters(in: .whitespaces))
                inFence.toggle()
                continue
            }
            if inFence {
                guard inShell else { continue }
                let code = line.components(separatedBy: " #").first ?? line
                if code.hasSuffix("\\") {
                    pending += code.dropLast() + " "
                } else {
                    lines.append(pending + code)
                    pending = ""
                }
                continue
            }
            let spans = line.components(separatedBy: "`")
            lines += stride(from: 1, to: spans.count, by: 2).map { spans[$0] }
        }
        return lines
    }

    /// The `certsign …` invocations in one line of code (split at pipes, `&&`, `;` and `$(`).
    static func invocations(_ line: String) -> [[String]] {
        var segments = [line]
        for separator in ["|", "&&", ";", "$("] {
            segments = segments.flatMap { $0.components(separatedBy: separator) }
        }
        return segments.compactMap { segment in
            let words = segment.split(separator: " ").map {
                $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"'()"))
            }
            guard let start = words.firstIndex(where: { $0 == "certsign" }) else { return nil }
            return Array(words[(start + 1)...])
        }
    }

    /// What is wrong with one invocation's options and parameters (empty when nothing).
    static func problems(_ arguments: [String]) -> [String] {
        var rest = arguments[...]
        while let first = rest.first, globalOptions.contains(first) || first.hasPrefix("--store") {
            rest = rest.dropFirst(first == "--store" || first == "--journal" ? 2 : 1)
        }
        let words: [String] = Array(rest.prefix { (word: String) in !word.hasPrefix("-") && !word.isEmpty })
        guard let (command, _) = Commands.find(words) else { return [] }
        let known = globalOptions.union(command.options.map { (option: OptionDeclaration) in option.name })
        let provider = arguments.firstIndex(of: "--provider").flatMap {
            arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
        }
        let declared = provider.flatMap { parameters[$0] } ?? allParameters
        var found: [String] = []
        for (index, argument) in arguments.enumerated() where argument.hasPrefix("--") && argument != "--" {
            let name = String(argument.prefix { $0 != "=" })
            if !known.contains(name) { found.append("'certsign \(command.name)' has no \(name)") }
            if ["--param", "--param-env", "--param-file"].contains(name), index + 1 < arguments.count {
                let key = String(arguments[index + 1].prefix { $0 != "=" })
                if key.allSatisfy({ $0.isLetter || $0.isNumber }), !key.isEmpty, key != "KEY", !declared.contains(key) {
                    found.append("\(provider ?? "no provider") declares no parameter '\(key)'")
                }
            }
        }
        return found
    }

    /// The option an inline quote documents on its own: `--tsa-ca`, `--tsa-ca FILE`, `--param-env
    /// KEY=VAR`, `--store-password-env/-file` (its first spelling); nil for other code and for an
    /// example of what is refused (`--password x`: its value is no placeholder).
    static func quotedOption(_ code: String) -> String? {
        let parts = code.split(separator: " ")
        guard let first = parts.first, first.hasPrefix("--"), first.count > 2, !first.contains("…") else { return nil }
        let placeholder = parts.dropFirst().allSatisfy { part in
            part.allSatisfy { $0.isUppercase || $0.isNumber || "=_.|[]…".contains($0) }
        }
        guard placeholder else { return nil }
        return String(first.prefix { $0 != "=" && $0 != "/" })
    }

    @Test("every certsign command line in the documents uses options and parameters that exist")
    func commandLinesUseDeclaredNames() throws {
        var found: [String] = []
        for document in try Self.documents() {
            for line in Self.codeLines(ReadmeTests.document(document)) {
                for invocation in Self.invocations(line) {
                    found += Self.problems(invocation).map { "\(document): \($0) in: \(line)" }
                }
                if let name = Self.quotedOption(line), !Self.allOptions.contains(name) {
                    found.append("\(document): no command has \(name)")
                }
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    @Test("a name in code that extends a parameter's name is itself a parameter (trustedCAFile…)")
    func parameterLikeNamesAreParameters() throws {
        var found: [String] = []
        for document in try Self.documents() {
            for line in Self.codeLines(ReadmeTests.document(document)) {
                let names = line.split { !$0.isLetter && !$0.isNumber }.map(String.init)
                for name in names where !Self.allParameters.contains(name) {
                    // Compound names only (`trustedCAFile`): `key` or `pin` begin many other words.
                    let compound = Self.allParameters.filter { $0.contains { $0.isUppercase } }
                    if let parameter = compound.first(where: { name.hasPrefix($0) && name.count > $0.count }),
                        name.dropFirst(parameter.count).first?.isUppercase == true
                    {
                        found.append("\(document): '\(name)' is no parameter (it extends '\(parameter)')")
                    }
                }
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }
}
