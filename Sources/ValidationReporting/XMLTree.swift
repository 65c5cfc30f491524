internal import CLibXML2Shims
import Foundation

/// One libxml2 document under construction: elements and attributes are added through libxml2's
/// tree API (which escapes text and attribute values), and the whole is serialised by libxml2, so no
/// XML is ever put together from strings. The document (and every node of it) is freed with this
/// object.
final class XMLTree {
    /// A namespace declared on the root element: its prefix and URI.
    struct Namespace {
        let prefix: String
        let uri: String
    }

    /// An element of the tree (valid while its tree lives).
    struct Element {
        fileprivate let node: OpaquePointer
    }

    private let document: OpaquePointer
    /// The root element.
    let root: Element

    /// A document whose root element is `rootName` in `rootNamespace`, with `other` namespaces
    /// declared on it too.
    init(rootName: String, rootNamespace: Namespace, declaring other: [Namespace]) throws(ValidationReportError) {
        guard let document = CLibXML2Shims_document_create(rootName, rootNamespace.uri, rootNamespace.prefix),
            let root = CLibXML2Shims_document_root(document)
        else {
            throw ValidationReportError(.xmlFailure, "libxml2 could not create a document (out of memory)")
        }
        self.document = document
        self.root = Element(node: root)
        for namespace in other {
            guard CLibXML2Shims_declare_namespace(document, namespace.uri, namespace.prefix) == 0 else {
                throw ValidationReportError(.xmlFailure, "libxml2 could not declare namespace \(namespace.uri)")
            }
        }
    }

    deinit { CLibXML2Shims_document_free(document) }

    /// Adds an element `name` in namespace `namespace` (declared at the root) under `parent`, with
    /// `text` as its content when given (libxml2 escapes it; characters XML 1.0 does not allow
    /// become U+FFFD).
    @discardableResult
    func add(
        _ name: String,
        in namespace: String,
        to parent: Element,
        text: String? = nil
    ) throws(ValidationReportError) -> Element {
        guard
            let node = CLibXML2Shims_add_element(
                document,
                parent.node,
                namespace,
                name,
                text.map(XMLTree.xmlCharacters)
            )
        else {
            throw ValidationReportError(.xmlFailure, "libxml2 could not add element \(name) (out of memory)")
        }
        return Element(node: node)
    }

    /// Sets the attribute `name` (no namespace) of `element` to `value` (libxml2 escapes it).
    func setAttribute(_ name: String, _ value: String, of element: Element) throws(ValidationReportError) {
        guard CLibXML2Shims_set_attribute(element.node, name, XMLTree.xmlCharacters(value)) == 0 else {
            throw ValidationReportError(.xmlFailure, "libxml2 could not set attribute \(name) (out of memory)")
        }
    }

    /// The document serialised as UTF-8 with an XML declaration, indented.
    func serialised() throws(ValidationReportError) -> Data {
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        guard CLibXML2Shims_serialise(document, &output, &length) == 0, let output else {
            throw ValidationReportError(.xmlFailure, "libxml2 could not serialise the report (out of memory)")
        }
        defer { CLibXML2Shims_free_output(output) }
        return Data(bytes: output, count: length)
    }

    /// `text` with every character XML 1.0 does not allow (NUL and the other C0 controls but tab,
    /// line feed and carriage return; U+FFFE, U+FFFF) replaced by U+FFFD: a certificate's subject or
    /// a PDF's field name is the signer's text and may hold anything.
    static func xmlCharacters(_ text: String) -> String {
        var allowed = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let value = scalar.value
            let isAllowed =
                value == 0x9 || value == 0xA || value == 0xD || (value >= 0x20 && value != 0xFFFE && value != 0xFFFF)
            allowed.append(isAllowed ? scalar : "\u{FFFD}")
        }
        return String(allowed)
    }
}
