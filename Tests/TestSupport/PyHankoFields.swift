import Foundation
import Testing

/// pyHanko's form-field tools: PDFs with empty signature fields, as another product makes them.
public enum PyHankoFields {
    /// Writes `input` with an empty visible signature field `name` that pyHanko adds
    /// (`append_signature_field`, an incremental update) at `box` (x1, y1, x2, y2 in PDF points) on
    /// page `page` (from 1) to `output`.
    public static func addSignatureField(
        _ input: String,
        output: String,
        name: String,
        page: Int,
        box: (Int, Int, Int, Int)
    ) throws {
        let script = """
            import sys
            from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
            from pyhanko.sign.fields import SigFieldSpec, append_signature_field
            with open(sys.argv[1], 'rb') as f, open(sys.argv[2], 'wb') as out:
                writer = IncrementalPdfFileWriter(f)
                box = tuple(int(v) for v in sys.argv[5].split(','))
                spec = SigFieldSpec(sig_field_name=sys.argv[3], on_page=int(sys.argv[4]), box=box)
                append_signature_field(writer, spec)
                writer.write(out)
            """
        let arguments = [input, output, name, "\(page - 1)", "\(box.0),\(box.1),\(box.2),\(box.3)"]
        let result = try ExternalTool.run("python3", ["-c", script] + arguments)
        try #require(result.status == 0, "pyHanko: \(result.errorOutput)")
    }
}
