internal import CXMLSecShims
import CertificateProviders

/// A parsed list's libxml2 tree (read-only), owned here and freed in `deinit`; its elements and the
/// XML-DSig check of its enveloped signature. Never leaves the module.
final class TrustedListXML {
    /// What checking the signature with one certificate found.
    enum SignatureCheck: Equatable {
        case valid
        case wrongKey(String)
        case contentChanged(String)
        case unsigned(String)
        case refused(String)
        case failed(String)
    }

    private let document: OpaquePointer

    private init(takingOwnershipOf document: OpaquePointer) { self.document = document }

    deinit { CXMLSecShims_document_free(document) }

    /// Parses `bytes` within `limits` (no network, no DTD, no entities); `name` names the list in errors.
    static func parse(_ bytes: [UInt8], limits: TrustedListLimits, name: String) throws -> TrustedListXML {
        var status: Int32 = 0
        var message = [CChar](repeating: 0, count: 512)
        let parsed: OpaquePointer? = "TSPService".withCString { counted in
            var cLimits = CXMLSecShims_limits(
                max_elements: limits.maximumElements,
                max_depth: limits.maximumDepth,
                counted_name: counted,
                max_counted: limits.maximumServices
            )
            return bytes.withUnsafeBufferPointer { buffer in
                CXMLSecShims_parse(buffer.baseAddress, buffer.count, &cLimits, &status, &message, message.count)
            }
        }
        if let parsed { return TrustedListXML(takingOwnershipOf: parsed) }
        let detail = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw parseError(status, detail: detail, limits: limits, name: name)
    }

    private static func parseError(
        _ status: Int32,
        detail: String,
        limits: TrustedListLimits,
        name: String
    )
        -> TrustedListError
    {
        let at = detail.isEmpty ? "" : " (\(detail))"
        switch Int(status) {
        case CXMLSecShims_parse_dtd:
            return TrustedListError(
                .entitiesRefused,
                "\(name) has a DOCTYPE\(at): trusted lists have none, and DTDs and entities are never read"
            )
        case CXMLSecShims_parse_too_many_elements:
            return TrustedListError(.limitExceeded, "\(name) has more than \(limits.maximumElements) XML elements\(at)")
        case CXMLSecShims_parse_too_deep:
            return TrustedListError(.limitExceeded, "\(name) nests elements deeper than \(limits.maximumDepth)\(at)")
        case CXMLSecShims_parse_too_many_counted:
            return TrustedListError(
                .limitExceeded,
                "\(name) has more than \(limits.maximumServices) trust services (TSPService elements)\(at)"
            )
        case CXMLSecShims_parse_malformed:
            return TrustedListError(.malformedXML, "\(name) is not well-formed XML\(at)")
        default:
            return TrustedListError(.limitExceeded, "\(name) could not be parsed: memory ran out")
        }
    }

    /// The root element.
    var root: Element? { CXMLSecShims_root(document).map { Element(node: $0, owner: self) } }

    /// Checks the enveloped signature with `certificate`'s public key.
    func checkSignature(with certificate: Certificate) -> SignatureCheck {
        var message = [CChar](repeating: 0, count: 512)
        let der = certificate.derRepresentation
        let code = der.withUnsafeBufferPointer { buffer in
            CXMLSecShims_verify(document, buffer.baseAddress, buffer.count, &message, message.count)
        }
        let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch Int(code) {
        case CXMLSecShims_verify_valid: return .valid
        case CXMLSecShims_verify_wrong_key: return .wrongKey(text)
        case CXMLSecShims_verify_content_changed: return .contentChanged(text)
        case CXMLSecShims_verify_no_signature: return .unsigned(text)
        case CXMLSecShims_verify_refused: return .refused(text)
        default: return .failed(text)
        }
    }

    /// One element of the tree; it keeps the document alive.
    struct Element {
        fileprivate let node: OpaquePointer
        fileprivate let owner: TrustedListXML

        /// The local name.
        var name: String { String(cString: CXMLSecShims_local_name(node)) }
        /// The namespace URI, or nil.
        var namespace: String? { CXMLSecShims_namespace(node).map { String(cString: $0) } }

        /// The element children, in order.
        var children: [Element] {
            var result: [Element] = []
            var next = CXMLSecShims_first_element(node)
            while let current = next {
                result.append(Element(node: current, owner: owner))
                next = CXMLSecShims_next_element(current)
            }
            return result
        }

        /// The element children named `name` (local name).
        func children(_ name: String) -> [Element] { children.filter { $0.name == name } }
        /// The first element child named `name`.
        func child(_ name: String) -> Element? { children.first { $0.name == name } }

        /// The text content, whitespace at both ends trimmed.
        var text: String {
            guard let raw = CXMLSecShims_text(node) else { return "" }
            defer { CXMLSecShims_free(raw) }
            return String(cString: raw).trimmingXMLWhitespace()
        }

        /// Attribute `name` ("xml:lang" for the language), or nil.
        func attribute(_ name: String) -> String? {
            guard let raw = CXMLSecShims_attribute(node, name) else { return nil }
            defer { CXMLSecShims_free(raw) }
            return String(cString: raw)
        }
    }
}

extension String {
    /// The string without XML whitespace (space, tab, CR, LF) at either end.
    func trimmingXMLWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
