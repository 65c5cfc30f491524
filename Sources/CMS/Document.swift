import CertificateProviders
public import Foundation

/// What to sign: bytes in memory or a file on disk (streamed, never loaded for detached signatures).
public struct Document: Sendable, CustomStringConvertible {
    /// Where the document's bytes are.
    public enum Source: Sendable {
        /// Bytes in memory.
        case bytes([UInt8])
        /// A file, read in chunks.
        case file(URL)
    }

    /// The bytes or the file.
    public var source: Source
    /// The name recorded in the journal (any Unicode; defaults to the file name).
    public var name: String

    /// Creates a document from bytes.
    public static func bytes(_ bytes: [UInt8], name: String) -> Document { Document(source: .bytes(bytes), name: name) }

    /// Creates a document from a file; the name defaults to the file's last path component.
    public static func file(_ url: URL, name: String? = nil) -> Document {
        Document(source: .file(url), name: name ?? url.lastPathComponent)
    }

    /// A one-line summary for logs and command-line output.
    public var description: String {
        switch source {
        case .bytes(let bytes): return "Document(\(name), \(bytes.count) bytes)"
        case .file(let url): return "Document(\(name), file \(url.path))"
        }
    }
}
