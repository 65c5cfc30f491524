internal import CPDFAppearanceShims
internal import Foundation

/// The bits of PDF syntax appearances write: numbers, names, hex strings and streams.
enum PDFSyntax {
    /// A real number with at most three decimals and no exponent (`12.5`, `-0.25`, `3`).
    static func number(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        if rounded == rounded.rounded() { return String(Int(rounded)) }
        var text = String(format: "%.3f", rounded)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }

    /// A name object: `/` and the name, with bytes outside the regular characters as `#xx`.
    static func name(_ text: String) -> String {
        "/"
            + text.utf8.map { byte in
                let regular = (0x21...0x7E).contains(byte) && !Array("()<>[]{}/%#".utf8).contains(byte)
                return regular ? String(UnicodeScalar(byte)) : String(format: "#%02X", byte)
            }.joined()
    }

    /// Bytes as upper-case hex digits (no angle brackets).
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02X", $0) }.joined()
    }

    /// A stream object's body: `dictionary` entries (without `/Length` and `/Filter`), then the
    /// data, Flate-compressed when `compressed` (and when zlib manages to).
    static func stream(_ entries: String, _ data: [UInt8], compressed: Bool = true) -> [UInt8] {
        var payload = data
        var filter = ""
        if compressed, let deflated = deflate(data) {
            payload = deflated
            filter = " /Filter /FlateDecode"
        }
        let head = "<< \(entries)\(filter) /Length \(payload.count) >>\nstream\n"
        return Array(head.utf8) + payload + Array("\nendstream".utf8)
    }

    /// zlib's compression of `data`, or nil when it fails (the data is then stored as it is).
    static func deflate(_ data: [UInt8]) -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = data.withUnsafeBufferPointer { cpdfappearance_deflate($0.baseAddress, $0.count, &output, &size) }
        guard status == 0, let output else { return nil }
        defer { cpdfappearance_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }
}
