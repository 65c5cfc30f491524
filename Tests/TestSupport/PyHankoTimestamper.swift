import CertificateProvidersTesting
import Foundation
import Testing

/// pyHanko's `PdfTimeStamper`: adds a PAdES document timestamp (`/Type /DocTimeStamp`, SHA-256)
/// from an RFC 3161 TSA over HTTP, as an incremental update.
public enum PyHankoTimestamper {
    /// Timestamps the PDF at `input` into `output` with the TSA at `tsaURL`, in signature field `field`.
    public static func addDocumentTimestamp(_ input: String, output: String, tsaURL: URL, field: String) throws {
        let script = """
            import sys
            from pyhanko.sign import timestamps
            from pyhanko.sign.signers.pdf_signer import PdfTimeStamper
            from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
            with open(sys.argv[2], 'rb') as f, open(sys.argv[3], 'wb') as out:
                stamper = PdfTimeStamper(timestamps.HTTPTimeStamper(sys.argv[1]), field_name=sys.argv[4])
                stamper.timestamp_pdf(IncrementalPdfFileWriter(f), 'sha256', output=out)
            """
        let result = try ExternalTool.run("python3", ["-c", script, tsaURL.absoluteString, input, output, field])
        try #require(result.status == 0, "pyHanko timestamp_pdf: \(result.errorOutput)")
    }
}
