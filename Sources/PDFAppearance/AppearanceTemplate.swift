internal import CertificateProviders
internal import Foundation

/// A text template with `%(name)` fields, filled in from values by name: `%%` is a literal `%`,
/// a line break (or the two characters `\n`) starts a new paragraph.
package struct AppearanceTemplate: Sendable {
    /// The template as given.
    package let text: String

    /// Creates a template from `text`.
    package init(_ text: String) { self.text = text }

    /// The field names the template uses, in order, each once.
    /// - Throws: `.invalidParameter` for a `%(` without its `)`.
    package func fieldNames() throws -> [String] {
        var names: [String] = []
        try walk { if case .field(let name) = $0, !names.contains(name) { names.append(name) } }
        return names
    }

    /// The template's paragraphs with every field replaced by its value.
    /// - Throws: `.invalidParameter` naming a field `values` has no entry for (and the known ones).
    package func fill(_ values: [String: String]) throws -> [String] {
        var text = ""
        try walk { part in
            switch part {
            case .literal(let literal): text += literal
            case .field(let name):
                guard let value = values[name] else {
                    let known = values.keys.sorted().map { "%(\($0))" }.joined(separator: ", ")
                    throw CertificateProviderError(
                        .invalidParameter,
                        "the appearance text has an unknown field %(\(name)); the fields are \(known)"
                    )
                }
                text += value
            }
        }
        return text.replacingOccurrences(of: "\\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
            .map { String($0) }
    }

    private enum Part {
        case literal(String)
        case field(String)
    }

    private func walk(_ visit: (Part) throws -> Void) throws {
        var rest = Substring(text)
        while let percent = rest.firstIndex(of: "%") {
            try visit(.literal(String(rest[..<percent])))
            let after = rest[rest.index(after: percent)...]
            if after.first == "%" {
                try visit(.literal("%"))
                rest = after.dropFirst()
            } else if after.first == "(" {
                guard let close = after.firstIndex(of: ")") else {
                    throw CertificateProviderError(
                        .invalidParameter,
                        "the appearance text has a field without its ')': \(String(rest.prefix(20)))"
                    )
                }
                try visit(.field(String(after[after.index(after: after.startIndex)..<close])))
                rest = after[after.index(after: close)...]
            } else {
                try visit(.literal("%"))
                rest = after
            }
        }
        try visit(.literal(String(rest)))
    }
}
