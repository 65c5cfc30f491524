import CertificateProvidersTesting
import Foundation
import Testing

/// pyHanko's `signers.sign_pdf`: a PAdES B-T signature (`/ETSI.CAdES.detached` with a signature
/// timestamp from an RFC 3161 TSA over HTTP), made by another implementation than ours.
public enum PyHankoSigner {
    /// Signs the PDF at `input` into `output` with the key and certificate files (PEM), the CA
    /// certificates in `chain`, and a signature timestamp from `tsaURL`, in field `field`.
    public static func signBT(
        _ input: String,
        output: String,
        key: String,
        certificate: String,
        chain: [String],
        tsaURL: URL,
        field: String
    ) throws {
        let script = """
            import sys
            from pyhanko.sign import signers, timestamps
            from pyhanko.sign.fields import SigSeedSubFilter
            from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
            signer = signers.SimpleSigner.load(sys.argv[1], sys.argv[2], ca_chain_files=sys.argv[7:])
            meta = signers.PdfSignatureMetadata(field_name=sys.argv[5], subfilter=SigSeedSubFilter.PADES)
            with open(sys.argv[3], 'rb') as f, open(sys.argv[4], 'wb') as out:
                signers.sign_pdf(IncrementalPdfFileWriter(f), meta, signer=signer,
                                 timestamper=timestamps.HTTPTimeStamper(sys.argv[6]), output=out)
            """
        let result = try ExternalTool.run(
            "python3",
            ["-c", script, key, certificate, input, output, field, tsaURL.absoluteString] + chain
        )
        try #require(result.status == 0, "pyHanko sign_pdf: \(result.errorOutput)")
    }
}
