internal import CFreeType
internal import CHarfBuzz
internal import CertificateProviders
package import Foundation

/// A TrueType or OpenType font file opened for shaping (HarfBuzz) with its metrics (FreeType).
///
/// Owns the HarfBuzz blob, face and font made from the file's bytes and destroys them in `deinit`.
package final class AppearanceFont {
    /// The file it was read from.
    package let url: URL
    /// Font units per em: shaped advances and offsets are in these units.
    package let unitsPerEm: Int
    /// The metrics the font descriptor needs, in font units.
    let metrics: Metrics
    /// Whether the outlines are CFF (embedded as `/FontFile3 /OpenType`) rather than TrueType.
    let hasCFFOutlines: Bool
    let face: OpaquePointer
    let font: OpaquePointer
    private let blob: OpaquePointer

    /// What FreeType reads from the file for the PDF font descriptor.
    struct Metrics {
        var postScriptName: String
        var ascender: Int
        var descender: Int
        var capHeight: Int
        var italicAngle: Double
        var boundingBox: (Int, Int, Int, Int)
    }

    /// Opens the font at `url` (the first face of a collection).
    /// - Throws: `.fontUnusable` when the file cannot be read or is not a TrueType/OpenType font.
    package init(contentsOf url: URL) throws {
        self.url = url
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: url))
        } catch {
            throw CertificateProviderError.fontUnusable("the font file '\(url.path)' cannot be read")
        }
        metrics = try Self.readMetrics(bytes, path: url.path)
        let made = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                hb_blob_create_or_fail($0.baseAddress, UInt32($0.count), HB_MEMORY_MODE_DUPLICATE, nil, nil)
            }
        }
        guard let made else {
            throw CertificateProviderError.fontUnusable("the font file '\(url.path)' is too large")
        }
        blob = made
        face = hb_face_create(blob, 0)
        font = hb_font_create(face)
        unitsPerEm = Int(hb_face_get_upem(face))
        let cff = hb_face_reference_table(face, Self.tag("CFF "))
        hasCFFOutlines = hb_blob_get_length(cff) > 0
        hb_blob_destroy(cff)
        guard hb_face_get_glyph_count(face) > 1, unitsPerEm > 0 else {
            throw CertificateProviderError.fontUnusable("'\(url.path)' holds no glyphs")
        }
    }

    deinit {
        hb_font_destroy(font)
        hb_face_destroy(face)
        hb_blob_destroy(blob)
    }

    /// A glyph's advance width in font units, as the font's metrics give it.
    func advance(of glyph: UInt32) -> Int { Int(hb_font_get_glyph_h_advance(font, glyph)) }

    /// An OpenType table tag (`HB_TAG`, a macro Swift cannot call).
    static func tag(_ name: String) -> hb_tag_t {
        name.utf8.reduce(0) { ($0 << 8) | hb_tag_t($1) }
    }

    /// Reads the font with FreeType: only scalable sfnt fonts (TrueType, OpenType) can be subset
    /// and embedded, so anything else (Type 1, bitmap fonts, other files) is refused here.
    private static func readMetrics(_ bytes: [UInt8], path: String) throws -> Metrics {
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, let library else {
            throw CertificateProviderError.fontUnusable("FreeType could not start to read '\(path)'")
        }
        defer { FT_Done_FreeType(library) }
        var handle: FT_Face?
        let status = bytes.withUnsafeBufferPointer {
            FT_New_Memory_Face(library, $0.baseAddress, FT_Long($0.count), 0, &handle)
        }
        guard status == 0, let handle else {
            throw CertificateProviderError.fontUnusable(
                "'\(path)' is not a font file (FreeType cannot read it); give a TrueType or OpenType font"
            )
        }
        defer { FT_Done_Face(handle) }
        let face = handle.pointee
        // FT_FACE_FLAG_SCALABLE (1 << 0) and FT_FACE_FLAG_SFNT (1 << 3): macros Swift does not import.
        guard face.face_flags & 1 != 0, face.face_flags & (1 << 3) != 0 else {
            throw CertificateProviderError.fontUnusable(
                "'\(path)' is not a TrueType or OpenType font (only those can be embedded)"
            )
        }
        var metrics = Metrics(
            postScriptName: FT_Get_Postscript_Name(handle).map { String(cString: $0) } ?? "Font",
            ascender: Int(face.ascender),
            descender: Int(face.descender),
            capHeight: Int(face.ascender),
            italicAngle: 0,
            boundingBox: (Int(face.bbox.xMin), Int(face.bbox.yMin), Int(face.bbox.xMax), Int(face.bbox.yMax))
        )
        if let os2 = FT_Get_Sfnt_Table(handle, FT_SFNT_OS2)?.assumingMemoryBound(to: TT_OS2.self),
            os2.pointee.version >= 2, os2.pointee.sCapHeight > 0
        {
            metrics.capHeight = Int(os2.pointee.sCapHeight)
        }
        if let post = FT_Get_Sfnt_Table(handle, FT_SFNT_POST)?.assumingMemoryBound(to: TT_Postscript.self) {
            metrics.italicAngle = Double(post.pointee.italicAngle) / 65536
        }
        return metrics
    }
}
