internal import CHarfBuzz
internal import CertificateProviders
internal import Foundation

/// A font cut down to the glyphs an appearance draws, by HarfBuzz's subsetter, with the map from
/// the original glyph indices to the subset's (which the PDF uses as CIDs).
struct FontSubset {
    /// The subset font file.
    let bytes: [UInt8]
    /// Original glyph index → the subset's.
    let newGlyphs: [UInt32: UInt32]

    /// Subsets `font` to `glyphs` (and what they need: composite parts, `.notdef`).
    /// - Throws: `.fontUnusable` when HarfBuzz cannot subset the font.
    init(_ font: AppearanceFont, glyphs: Set<UInt32>) throws {
        let failure = CertificateProviderError.fontUnusable("HarfBuzz could not subset the font '\(font.url.path)'")
        guard let input = hb_subset_input_create_or_fail() else { throw failure }
        defer { hb_subset_input_destroy(input) }
        let glyphSet = hb_subset_input_glyph_set(input)
        for glyph in glyphs { hb_set_add(glyphSet, glyph) }
        guard let plan = hb_subset_plan_create_or_fail(font.face, input) else { throw failure }
        defer { hb_subset_plan_destroy(plan) }
        let mapping = hb_subset_plan_old_to_new_glyph_mapping(plan)
        var newGlyphs: [UInt32: UInt32] = [:]
        for glyph in glyphs {
            let mapped = hb_map_get(mapping, glyph)
            // HB_MAP_VALUE_INVALID ((hb_codepoint_t) -1): the glyph did not make it into the subset.
            guard mapped != UInt32.max else { throw failure }
            newGlyphs[glyph] = mapped
        }
        guard let subsetFace = hb_subset_plan_execute_or_fail(plan) else { throw failure }
        defer { hb_face_destroy(subsetFace) }
        let blob = hb_face_reference_blob(subsetFace)
        defer { hb_blob_destroy(blob) }
        var length: UInt32 = 0
        guard let data = hb_blob_get_data(blob, &length), length > 0 else { throw failure }
        bytes = data.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
        }
        self.newGlyphs = newGlyphs
    }
}
