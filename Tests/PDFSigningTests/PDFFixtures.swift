import CertificateProviders
import CertificateProvidersTesting
import Foundation
import Testing

/// PDFs made by qpdf from a small hand-built one, and the oracles: pyHanko (through its Python API:
/// the installed pyHanko 0.38 has no `pyhanko` command), poppler's `pdfsig` and `qpdf --check`.
enum PDFFixtures {
    /// The variants qpdf writes: a classic cross-reference table, object streams with an xref
    /// stream, and a linearized file.
    enum Variant: String, CaseIterable, Sendable, CustomStringConvertible {
        case classic, objectStreams, linearized
        var qpdfArguments: [String] {
            switch self {
            case .classic: return ["--object-streams=disable"]
            case .objectStreams: return ["--object-streams=generate"]
            case .linearized: return ["--linearize"]
            }
        }
        var description: String { rawValue }
    }

    /// Writes a PDF of `variant` made by qpdf into `directory`; returns its path.
    static func make(_ variant: Variant, in directory: TemporaryDirectory, name: String? = nil) throws -> String {
        let source = try directory.write("source-\(variant).pdf", TestPDF.minimal())
        let path = directory.path(name ?? "\(variant).pdf")
        let result = try ExternalTool.run("qpdf", variant.qpdfArguments + ["--empty", "--pages", source, "--", path])
        try #require(result.status == 0, "qpdf: \(result.errorOutput)")
        return path
    }

    /// `qpdf --check`: status 0 and no warnings.
    static func qpdfCheck(_ path: String) throws -> ExternalTool.Result {
        try ExternalTool.run("qpdf", ["--check", path])
    }

    /// `pdfsig` output.
    static func pdfsig(_ path: String) throws -> String {
        let result = try ExternalTool.run("pdfsig", [path])
        return result.output + result.errorOutput
    }

    /// pyHanko's judgement of every signature: `field: SUMMARY` lines (`INTACT:TRUSTED,…`).
    static func pyhankoValidate(_ path: String, root: Certificate, in directory: TemporaryDirectory) throws -> [String]
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

    /// Signs `input` into `output` with pyHanko (PEM key and chain; the key's password through the
    /// environment), as a second-party PAdES signer.
    static func pyhankoSign(
        _ input: String,
        output: String,
        identity: SigningIdentity,
        field: String,
        in directory: TemporaryDirectory,
        certifyNoChanges: Bool = false
    ) throws {
        let key = try #require(identity.key as? LocalSigningKey)
        let keyPath = try directory.write(
            "pyhanko-key.pem",
            text: try key.pemRepresentation(password: Secret("pyhanko-pass"))
        )
        let certPath = try directory.write("pyhanko-cert.pem", text: identity.certificate.pemRepresentation)
        let chainPath = try directory.write("pyhanko-chain.pem", text: identity.chain.map(\.pemRepresentation).joined())
        let script = """
            import os, sys
            from pyhanko.sign import signers
            from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
            signer = signers.SimpleSigner.load(sys.argv[1], sys.argv[2], ca_chain_files=(sys.argv[3],),
                                               key_passphrase=os.environ['KEY_PASSWORD'].encode())
            from pyhanko.sign.fields import MDPPerm, SigSeedSubFilter
            certify = sys.argv[7] == 'certify'
            with open(sys.argv[4], 'rb') as f, open(sys.argv[5], 'wb') as out:
                writer = IncrementalPdfFileWriter(f)
                meta = signers.PdfSignatureMetadata(field_name=sys.argv[6], subfilter=SigSeedSubFilter.PADES,
                                                    certify=certify, docmdp_permissions=MDPPerm.NO_CHANGES)
                signers.sign_pdf(writer, meta, signer=signer, output=out)
            """
        let result = try ExternalTool.run(
            "python3",
            [
                "-c", script, keyPath, certPath, chainPath, input, output, field,
                certifyNoChanges ? "certify" : "approve",
            ],
            environment: ["KEY_PASSWORD": "pyhanko-pass"]
        )
        try #require(result.status == 0, "pyHanko sign: \(result.errorOutput)")
    }

    /// Appends an unsigned incremental update (a changed /Lang in the catalog) with pyHanko's writer.
    static func appendUnsignedRevision(_ input: String, output: String) throws {
        let script = """
            import sys
            from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
            from pyhanko.pdf_utils.generic import pdf_string, NameObject
            with open(sys.argv[1], 'rb') as f, open(sys.argv[2], 'wb') as out:
                writer = IncrementalPdfFileWriter(f)
                writer.root[NameObject('/Lang')] = pdf_string('de-DE')
                writer.update_root()
                writer.write(out)
            """
        let result = try ExternalTool.run("python3", ["-c", script, input, output])
        try #require(result.status == 0, "pyHanko writer: \(result.errorOutput)")
    }
}
