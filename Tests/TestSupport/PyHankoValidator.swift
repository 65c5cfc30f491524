public import CertificateProviders
public import CertificateProvidersTesting
import Foundation
import Testing

/// pyHanko's `validate_pdf_signature`: the second opinion on every signature of a PDF.
public enum PyHankoValidator {
    /// pyHanko's judgement of every signature of the PDF at `path` with `root` trusted: one
    /// `field: SUMMARY` line each (`INTACT:TRUSTED,…`).
    public static func validate(_ path: String, root: Certificate, in directory: TemporaryDirectory) throws -> [String]
    {
        let ca = try directory.write("pyhanko-ca-\(UUID().uuidString).pem", text: root.pemRepresentation)
        let script = """
            import sys
            from pyhanko.keys import load_cert_from_pemder
            from pyhanko.pdf_utils.reader import PdfFileReader
            from pyhanko.sign.validation import validate_pdf_signature
            from pyhanko_certvalidator import ValidationContext
            vc = ValidationContext(trust_roots=[load_cert_from_pemder(sys.argv[1])])
            with open(sys.argv[2], 'rb') as f:
                reader = PdfFileReader(f)
                for sig in reader.embedded_signatures:
                    status = validate_pdf_signature(sig, vc)
                    print(f"{sig.field_name}: {status.summary()}")
            """
        let result = try ExternalTool.run("python3", ["-c", script, ca, path])
        try #require(result.status == 0, "pyHanko: \(result.errorOutput)")
        return result.output.split(separator: "\n").map(String.init)
    }
}
