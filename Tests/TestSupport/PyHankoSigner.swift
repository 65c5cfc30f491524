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

extension PyHankoSigner {
    /// What ``signBB(_:_:output:key:certificate:chain:field:)`` makes: a PAdES B-B signature inside
    /// the PDF, or a detached CAdES-BES signature (DER) of any file.
    public enum Kind: String, Sendable { case pdf, cms }

    /// Signs `input` into `output` with pyHanko, the key and certificate files (PEM) and the CA
    /// certificates in `chain`, without a timestamp: as `kind` says (a PDF's signature in field
    /// `field`).
    public static func signBB(
        _ kind: Kind,
        _ input: String,
        output: String,
        key: String,
        certificate: String,
        chain: [String],
        field: String = "PyHankoSig"
    ) throws {
        let script = """
            import sys, asyncio
            from pyhanko.sign import signers
            from pyhanko.sign.fields import SigSeedSubFilter
            from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
            signer = signers.SimpleSigner.load(sys.argv[2], sys.argv[3], ca_chain_files=sys.argv[7:])
            if sys.argv[1] == 'pdf':
                meta = signers.PdfSignatureMetadata(field_name=sys.argv[6], subfilter=SigSeedSubFilter.PADES)
                with open(sys.argv[4], 'rb') as f, open(sys.argv[5], 'wb') as out:
                    signers.sign_pdf(IncrementalPdfFileWriter(f), meta, signer=signer, output=out)
            else:
                data = open(sys.argv[4], 'rb').read()
                signed = asyncio.run(signer.async_sign_general_data(data, 'sha256', detached=True, use_cades=True))
                open(sys.argv[5], 'wb').write(signed.dump())
            """
        let result = try ExternalTool.run(
            "python3",
            ["-c", script, kind.rawValue, key, certificate, input, output, field] + chain
        )
        try #require(result.status == 0, "pyHanko \(kind) signing: \(result.errorOutput)")
    }
}

extension PyHankoSigner {
    /// pyHanko's `Signer.async_sign` over a precomputed digest: a detached CAdES-BES CMS (DER) whose
    /// messageDigest is `digest`, made by another implementation than ours, as a signer elsewhere
    /// answers a prepared PDF's ByteRange digest (`pades`: without a signing-time attribute).
    /// - Returns: the CMS.
    public static func signDigest(
        _ digest: [UInt8],
        algorithm: String = "sha256",
        key: String,
        certificate: String,
        pades: Bool = true,
        in directory: TemporaryDirectory
    ) throws -> [UInt8] {
        let script = """
            import sys, asyncio, base64
            from pyhanko.sign import signers
            signer = signers.SimpleSigner.load(sys.argv[1], sys.argv[2])
            digest = base64.b64decode(sys.argv[3])
            signed = asyncio.run(signer.async_sign(digest, sys.argv[4], use_pades=sys.argv[5] == 'pades'))
            open(sys.argv[6], 'wb').write(signed.dump())
            """
        let output = directory.path("pyhanko-\(UUID().uuidString).p7s")
        let result = try ExternalTool.run(
            "python3",
            [
                "-c", script, key, certificate, Data(digest).base64EncodedString(), algorithm,
                pades ? "pades" : "cades", output,
            ]
        )
        try #require(result.status == 0, "pyHanko async_sign: \(result.errorOutput)")
        return try Array(Data(contentsOf: URL(fileURLWithPath: output)))
    }
}
