import Foundation
import Testing

/// pyHanko's reading of a PDF's certification signature: `read_certification_data` (the catalog's
/// `/Perms /DocMDP`) and the embedded signature it names.
public enum PyHankoCertification {
    /// The certification signature pyHanko finds in the PDF at `path`: its field's name and its
    /// DocMDP permission (`docmdp_level`, 1 to 3); nil when pyHanko finds the document uncertified.
    public static func read(_ path: String) throws -> (field: String, permission: Int)? {
        let script = """
            import sys
            from pyhanko.pdf_utils.reader import PdfFileReader
            from pyhanko.sign.validation import read_certification_data
            with open(sys.argv[1], 'rb') as f:
                reader = PdfFileReader(f)
                info = read_certification_data(reader)
                if info is None:
                    print('uncertified')
                    sys.exit(0)
                for sig in reader.embedded_signatures:
                    if sig.sig_object.container_ref == info.author_sig.container_ref:
                        print(f"certified {info.permission.value} {sig.docmdp_level.value} {sig.field_name}")
            """
        let result = try ExternalTool.run("python3", ["-c", script, path])
        try #require(result.status == 0, "pyHanko: \(result.errorOutput)")
        let words = result.output.split(separator: "\n").last?.split(separator: " ", maxSplits: 3) ?? []
        guard words.first == "certified" else { return nil }
        try #require(words.count == 4 && words[1] == words[2], "pyHanko: \(result.output)")
        return (String(words[3]), try #require(Int(words[1])))
    }
}
