import CertificateProviders

/// A ``SigningPlan``'s update written after the original bytes, with its ByteRange filled in:
/// where `/Contents` lies and which bytes the signature covers.
struct PlacedUpdate {
    /// The offset of the `<` that opens `/Contents`.
    let contentsStart: Int64
    /// The offset just after the `>` that closes `/Contents`.
    let contentsEnd: Int64
    /// The size of the signed file.
    let total: Int64

    /// The ByteRange, `[0, a, b, c]`.
    var byteRange: [Int64] { [0, contentsStart, contentsEnd, total - contentsEnd] }
    /// The signed bytes: everything but `/Contents`.
    var coveredRanges: [Range<Int64>] { [0..<contentsStart, contentsEnd..<total] }

    /// Writes the plan's update after the original bytes, cuts the file there and fills in the
    /// ByteRange numbers.
    /// - Throws: `.invalidParameter` when the numbers do not fit their room; `.fileSystem`.
    static func write(_ plan: SigningPlan, to target: borrowing PDFFile) throws -> PlacedUpdate {
        let (placed, update) = try fill(plan)
        try target.write(update, at: plan.originalSize)
        try target.truncate(to: placed.total)
        return placed
    }

    /// Where the plan's update lands after the original bytes, and the update with its ByteRange
    /// numbers filled in (the file is not touched).
    /// - Throws: `.invalidParameter` when the numbers do not fit their room.
    static func fill(_ plan: SigningPlan) throws -> (placed: PlacedUpdate, update: [UInt8]) {
        let contentsStart = plan.originalSize + Int64(plan.contentsOffset)
        let placed = PlacedUpdate(
            contentsStart: contentsStart,
            contentsEnd: contentsStart + Int64(plan.reservedSize * 2 + 2),
            total: plan.originalSize + Int64(plan.update.count)
        )
        let rangeText = Array(
            "0 \(placed.contentsStart) \(placed.contentsEnd) \(placed.total - placed.contentsEnd)".utf8
        )
        guard rangeText.count <= SigningPlan.byteRangeWidth else {
            throw CertificateProviderError(.invalidParameter, "the PDF is too large to sign")
        }
        var update = plan.update
        update.replaceSubrange(
            plan.byteRangeOffset..<(plan.byteRangeOffset + SigningPlan.byteRangeWidth),
            with: rangeText + [UInt8](repeating: 0x20, count: SigningPlan.byteRangeWidth - rangeText.count)
        )
        return (placed, update)
    }

    /// The digest of the covered bytes, streamed from the file.
    func digest(of target: borrowing PDFFile, algorithm: DigestAlgorithm) throws -> [UInt8] {
        var hasher = DigestAlgorithm.Hasher(algorithm)
        for range in coveredRanges { try target.forEachChunk(in: range) { hasher.update($0) } }
        return hasher.finalize()
    }
}
