import CertificateProviders

extension Collection {
    /// The one element whose ID is, or starts with, `prefix`: commands that take an ID accept it
    /// shortened, as long as it names one element.
    /// - Parameters:
    ///   - prefix: the ID, or its start, as given on the command line.
    ///   - id: the element's ID.
    ///   - kind: what an element is, for messages (`pending signature`; an `s` makes the plural).
    ///   - place: where the elements were looked for, for messages (`in the journal …`).
    /// - Throws: `.notStored` when no ID starts with `prefix`; `.invalidParameter` when several do.
    func onlyElement(
        withIDPrefix prefix: String,
        id: (Element) -> String,
        kind: String,
        place: String
    ) throws -> Element {
        let matches = filter { id($0).hasPrefix(prefix) }
        guard let match = matches.first else {
            throw CertificateProviderError(.notStored, "no \(kind) with id \(prefix) \(place)")
        }
        guard matches.count == 1 else {
            throw CertificateProviderError.invalidParameter(
                "the id prefix \(prefix) fits \(matches.count) \(kind)s \(place): give more of the id"
            )
        }
        return match
    }
}
