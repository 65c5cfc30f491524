import CertificateProviders
import CertificateProvidersTesting
import Foundation
import TestSupport
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

    /// Writes a PDF of `variant` made by qpdf into a new temporary directory named after `prefix`.
    /// - Returns: the directory and the PDF's path.
    static func make(_ variant: Variant, inNewDirectory prefix: String) throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory(prefix: prefix)
        return (directory, try make(variant, in: directory))
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

    /// pdfsig calls `signatures` signatures valid and `qpdf --check` passes with no warning.
    static func expectPopplerAndQPDFAccept(
        _ path: String,
        signatures: Int = 1,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let check = try qpdfCheck(path)
        #expect(
            check.status == 0 && !check.output.contains("WARNING"),
            "qpdf --check: \(check.output) \(check.errorOutput)",
            sourceLocation: sourceLocation
        )
        let pdfsig = try pdfsig(path)
        #expect(
            pdfsig.components(separatedBy: "Signature Validation: Signature is Valid.").count - 1 == signatures,
            "pdfsig: \(pdfsig)",
            sourceLocation: sourceLocation
        )
    }

    /// pyHanko finds `signatures` signatures, each INTACT:TRUSTED under `root`, and poppler and qpdf
    /// accept the file.
    static func expectOthersAccept(
        _ path: String,
        root: Certificate,
        signatures: Int = 1,
        in directory: TemporaryDirectory,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let verdicts = try pyhankoValidate(path, root: root, in: directory)
        #expect(verdicts.count == signatures, "pyHanko: \(verdicts)", sourceLocation: sourceLocation)
        for verdict in verdicts {
            #expect(verdict.contains("INTACT:TRUSTED"), "pyHanko: \(verdict)", sourceLocation: sourceLocation)
        }
        try expectPopplerAndQPDFAccept(path, signatures: signatures, sourceLocation: sourceLocation)
    }

    /// pyHanko's judgement of every signature: `field: SUMMARY` lines (`INTACT:TRUSTED,…`).
    static func pyhankoValidate(_ path: String, root: Certificate, in directory: TemporaryDirectory) throws -> [String]
    {
        try PyHankoValidator.validate(path, root: root, in: directory)
    }

    /// The password of the key files ``pyhankoFiles(_:prefix:in:)`` writes.
    static let pyhankoKeyPassword = "pyhanko-pass"

    /// Writes what pyHanko's `SimpleSigner.load` reads for `identity` into `directory`: its key (PEM,
    /// encrypted with ``pyhankoKeyPassword``, a new file each call), its certificate and its chain.
    /// - Returns: the three paths.
    static func pyhankoFiles(
        _ identity: SigningIdentity,
        prefix: String,
        in directory: TemporaryDirectory
    ) throws -> (key: String, certificate: String, chain: String) {
        let key = try #require(identity.key as? LocalSigningKey)
        let keyPath = try directory.write(
            "\(prefix)-key-\(UUID().uuidString).pem",
            text: try key.pemRepresentation(password: Secret(pyhankoKeyPassword))
        )
        let certificatePath = try directory.write("\(prefix)-cert.pem", text: identity.certificate.pemRepresentation)
        let chain = identity.chain.map(\.pemRepresentation).joined()
        let chainPath = try directory.write("\(prefix)-chain.pem", text: chain)
        return (keyPath, certificatePath, chainPath)
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
        let files = try pyhankoFiles(identity, prefix: "pyhanko", in: directory)
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
                "-c", script, files.key, files.certificate, files.chain, input, output, field,
                certifyNoChanges ? "certify" : "approve",
            ],
            environment: ["KEY_PASSWORD": pyhankoKeyPassword]
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

    /// pyHanko finds one signature, INTACT:TRUSTED under `root`, whose signature timestamp is intact,
    /// trusted under `timestampRoot` and valid; poppler and qpdf accept the file.
    static func expectTimestampedTrusted(
        _ path: String,
        root: Certificate,
        timestampRoot: Certificate,
        in directory: TemporaryDirectory,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let verdicts = try pyhankoValidateTimestamped(path, root: root, timestampRoot: timestampRoot, in: directory)
        #expect(
            verdicts.count == 1 && verdicts[0].contains("INTACT:TRUSTED")
                && verdicts[0].contains("| ts True True True"),
            "\(verdicts)",
            sourceLocation: sourceLocation
        )
        try expectPopplerAndQPDFAccept(path, sourceLocation: sourceLocation)
    }

    /// pyHanko's judgement of every signature and its signature timestamp, with `root` trusted for
    /// signers and `timestampRoot` for timestamps: `field: SUMMARY | ts INTACT VALID TRUSTED TIME`.
    static func pyhankoValidateTimestamped(
        _ path: String,
        root: Certificate,
        timestampRoot: Certificate,
        in directory: TemporaryDirectory
    ) throws -> [String] {
        let ca = try directory.write("pyhanko-ca-\(UUID().uuidString).pem", text: root.pemRepresentation)
        let tsa = try directory.write("pyhanko-tsa-\(UUID().uuidString).pem", text: timestampRoot.pemRepresentation)
        let script = """
            import sys
            from pyhanko.keys import load_cert_from_pemder
            from pyhanko.pdf_utils.reader import PdfFileReader
            from pyhanko.sign.validation import validate_pdf_signature
            from pyhanko_certvalidator import ValidationContext
            vc = ValidationContext(trust_roots=[load_cert_from_pemder(sys.argv[1])])
            tsvc = ValidationContext(trust_roots=[load_cert_from_pemder(sys.argv[2])])
            with open(sys.argv[3], 'rb') as f:
                reader = PdfFileReader(f)
                for sig in reader.embedded_signatures:
                    status = validate_pdf_signature(sig, vc, ts_validation_context=tsvc)
                    ts = status.timestamp_validity
                    verdict = 'none' if ts is None else f"{ts.intact} {ts.valid} {ts.trusted} {ts.timestamp.isoformat()}"
                    print(f"{sig.field_name}: {status.summary()} | ts {verdict}")
            """
        let result = try ExternalTool.run("python3", ["-c", script, ca, tsa, path])
        try #require(result.status == 0, "pyHanko: \(result.errorOutput)")
        return result.output.split(separator: "\n").map(String.init)
    }

    /// Writes the first signature's signature value and its signature timestamp token (DER) out
    /// of the PDF with pyHanko's reader; false when it has no token.
    static func extractTimestamp(_ path: String, value: String, token: String) throws -> Bool {
        let script = """
            import sys
            from pyhanko.pdf_utils.reader import PdfFileReader
            with open(sys.argv[1], 'rb') as f:
                sig = PdfFileReader(f).embedded_signatures[0]
                info = sig.signer_info
                open(sys.argv[2], 'wb').write(info['signature'].native)
                attrs = info['unsigned_attrs'].native and info['unsigned_attrs'] or []
                tokens = [a for a in attrs if a['type'].native == 'signature_time_stamp_token']
                if tokens:
                    open(sys.argv[3], 'wb').write(tokens[0]['values'][0].dump())
                print(len(tokens))
            """
        let result = try ExternalTool.run("python3", ["-c", script, path, value, token])
        try #require(result.status == 0, "pyHanko reader: \(result.errorOutput)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
    }

    /// Writes a PDF with an interactive form holding one empty text field `Name` (widget on the
    /// first page) into `directory`, rewritten by qpdf in `variant`'s layout; returns its path.
    static func makeForm(_ variant: Variant, in directory: TemporaryDirectory) throws -> String {
        let base = try make(variant, in: directory, name: "form-base-\(variant).pdf")
        let script = """
            import sys
            from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
            from pyhanko.pdf_utils.generic import (DictionaryObject, NameObject, ArrayObject, NumberObject,
                                                   pdf_string)
            with open(sys.argv[1], 'rb') as f, open(sys.argv[2], 'wb') as out:
                writer = IncrementalPdfFileWriter(f)
                page_ref = writer.find_page_for_modification(0)[0]
                page = page_ref.get_object()
                field = writer.add_object(DictionaryObject({
                    NameObject('/Type'): NameObject('/Annot'), NameObject('/Subtype'): NameObject('/Widget'),
                    NameObject('/FT'): NameObject('/Tx'), NameObject('/T'): pdf_string('Name'),
                    NameObject('/Rect'): ArrayObject([NumberObject(72), NumberObject(600), NumberObject(300),
                                                      NumberObject(630)]),
                    NameObject('/P'): page_ref,
                }))
                page[NameObject('/Annots')] = ArrayObject([field])
                writer.update_container(page)
                writer.root[NameObject('/AcroForm')] = DictionaryObject({NameObject('/Fields'): ArrayObject([field])})
                writer.update_root()
                writer.write(out)
            """
        let staged = directory.path("form-staged-\(variant).pdf")
        let written = try ExternalTool.run("python3", ["-c", script, base, staged])
        try #require(written.status == 0, "pyHanko writer: \(written.errorOutput)")
        // One revision again: qpdf rewrites the whole file in the variant's layout.
        let path = directory.path("form-\(variant).pdf")
        let result = try ExternalTool.run("qpdf", variant.qpdfArguments + [staged, path])
        try #require(result.status == 0, "qpdf: \(result.errorOutput)")
        return path
    }

    /// Appends an unsigned revision that fills the text field `Name` (its `/V`) with pyHanko's writer.
    static func fillNameField(_ input: String, output: String) throws {
        let script = """
            import sys
            from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
            from pyhanko.pdf_utils.generic import pdf_string, NameObject
            with open(sys.argv[1], 'rb') as f, open(sys.argv[2], 'wb') as out:
                writer = IncrementalPdfFileWriter(f)
                for ref in writer.root['/AcroForm']['/Fields']:
                    field = ref.get_object()
                    if field.get('/T') == 'Name':
                        field[NameObject('/V')] = pdf_string('Ivan Ivanov')
                        writer.mark_update(ref)
                writer.write(out)
            """
        let result = try ExternalTool.run("python3", ["-c", script, input, output])
        try #require(result.status == 0, "pyHanko writer: \(result.errorOutput)")
    }

    /// Appends an unsigned revision whose cross-reference stream puts two objects in a new object
    /// stream: first a new, unreferenced dictionary, then the first page with `/Rotate 90`. The
    /// stream's header separates its pairs with `separator` (any PDF whitespace is allowed there).
    static func rotatePageInObjectStream(_ input: String, output: String, separator: String) throws {
        let script = """
            import sys
            from io import BytesIO
            from pyhanko.pdf_utils import generic, xref
            from pyhanko.pdf_utils.generic import pdf_name
            from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
            separator = sys.argv[3].encode('latin-1')
            def as_pdf_object(self):
                header, body = BytesIO(), BytesIO()
                for idnum, obj in self._obj_refs.items():
                    offset = body.tell()
                    obj.write_to_stream(body, None)
                    header.write(b'%d %d' % (idnum, offset) + separator)
                data = header.getvalue()
                stream = generic.StreamObject({
                    pdf_name('/Type'): pdf_name('/ObjStm'),
                    pdf_name('/N'): generic.NumberObject(len(self._obj_refs)),
                    pdf_name('/First'): generic.NumberObject(len(data)),
                }, stream_data=data + body.getvalue())
                stream.compress()
                return stream
            xref.ObjectStream.as_pdf_object = as_pdf_object
            with open(sys.argv[1], 'rb') as f, open(sys.argv[2], 'wb') as out:
                writer = IncrementalPdfFileWriter(f)
                assert writer.stream_xrefs, 'the input must use cross-reference streams'
                objects = writer.prepare_object_stream()
                writer.add_object(generic.DictionaryObject({pdf_name('/Note'): generic.TextStringObject('x')}), obj_stream=objects)
                page_ref = writer.find_page_for_modification(0)[0]
                page = page_ref.get_object()
                page[pdf_name('/Rotate')] = generic.NumberObject(90)
                objects.add_object(page_ref.idnum, page)
                writer.objs_in_streams[page_ref.idnum] = page
                # The writer's own list of changed objects stays empty (both are in the stream).
                writer._force_write_when_empty = True
                writer.write(out)
            """
        let result = try ExternalTool.run("python3", ["-c", script, input, output, separator])
        try #require(result.status == 0, "pyHanko writer: \(result.errorOutput)")
    }

    /// The object number of the first page (`N 0 R` for `qpdf --show-object`).
    static func firstPageObject(_ path: String) throws -> String {
        let result = try ExternalTool.run("qpdf", ["--show-pages", path])
        let line = try #require(result.output.split(separator: "\n").first { $0.hasPrefix("page 1:") })
        return String(line.dropFirst("page 1: ".count))
    }

    /// Appends an unsigned revision that replaces the first page's content stream.
    static func changePageContent(_ input: String, output: String) throws {
        let script = """
            import sys
            from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
            from pyhanko.pdf_utils.generic import StreamObject, NameObject
            with open(sys.argv[1], 'rb') as f, open(sys.argv[2], 'wb') as out:
                writer = IncrementalPdfFileWriter(f)
                page_ref = writer.find_page_for_modification(0)[0]
                page = page_ref.get_object()
                contents = page.raw_get('/Contents')
                stream = contents.get_object()
                stream._data = b'BT /F1 24 Tf 72 720 Td (Page 1 of a CHANGED contract) Tj ET'
                stream._encoded_data = None
                writer.mark_update(contents)
                writer.write(out)
            """
        let result = try ExternalTool.run("python3", ["-c", script, input, output])
        try #require(result.status == 0, "pyHanko writer: \(result.errorOutput)")
    }
}
