import Foundation

extension PendingSignature {
    /// What completing a PAdES signature needs besides the CMS: the incremental update prepared once
    /// for the PDF, with its `/ByteRange` fixed and its `/Contents` reserved, and the facts that tie
    /// it to the PDF it was made for.
    ///
    /// The update is appended to exactly the bytes it was made after, so completion refuses a PDF
    /// whose size or SHA-256 is not ``originalSize`` and ``originalSHA256``. Its JSON leaves out the
    /// zero digits of the reserved `/Contents` (they are put back on reading), so it stays the size
    /// of the update's objects.
    public struct PDFUpdate: Sendable, Equatable {
        /// The size in bytes of the PDF the update goes after.
        public let originalSize: Int64
        /// That PDF's SHA-256.
        public let originalSHA256: [UInt8]
        /// The signature field the update fills or creates.
        public let fieldName: String
        /// The signed byte ranges of the completed PDF, `[0, a, b, c]`: bytes `0..<a` and `b..<b+c`.
        public let byteRange: [Int64]
        /// The bytes reserved in `/Contents` for the CMS (the signature with its timestamp token).
        public let reservedSize: Int
        /// The offset inside ``update`` of the `<` that opens `/Contents`.
        public let contentsOffset: Int
        /// The incremental update with its ByteRange numbers filled in and `/Contents` all zero digits.
        public let update: [UInt8]

        /// Creates the payload; the offsets and sizes must describe `update` (``PendingSignature``'s
        /// reading checks them).
        package init(
            originalSize: Int64,
            originalSHA256: [UInt8],
            fieldName: String,
            byteRange: [Int64],
            reservedSize: Int,
            contentsOffset: Int,
            update: [UInt8]
        ) {
            self.originalSize = originalSize
            self.originalSHA256 = originalSHA256
            self.fieldName = fieldName
            self.byteRange = byteRange
            self.reservedSize = reservedSize
            self.contentsOffset = contentsOffset
            self.update = update
        }

        /// The signed bytes of the update: all but `/Contents` with its delimiters.
        package var coveredParts: (head: ArraySlice<UInt8>, tail: ArraySlice<UInt8>) {
            (update[..<contentsOffset], update[(contentsOffset + reservedSize * 2 + 2)...])
        }

        /// Why these fields do not describe one update, or nil when they do.
        var inconsistency: String? {
            let contentsEnd = contentsOffset + reservedSize * 2 + 2
            guard originalSize >= 0, reservedSize > 0, contentsOffset >= 0, contentsEnd <= update.count else {
                return "the reserved /Contents does not lie inside the update"
            }
            guard update[contentsOffset] == 0x3C, update[contentsEnd - 1] == 0x3E else {
                return "the update has no /Contents where contentsOffset says"
            }
            let start = originalSize + Int64(contentsOffset)
            let end = originalSize + Int64(contentsEnd)
            guard byteRange == [0, start, end, originalSize + Int64(update.count) - end] else {
                return "the byteRange does not fit the update and the original's size"
            }
            guard originalSHA256.count == 32 else { return "originalSHA256 is not a SHA-256 digest" }
            return nil
        }
    }
}

extension PendingSignature.PDFUpdate: Codable {
    private enum CodingKeys: String, CodingKey {
        case originalSize, originalSHA256, fieldName, byteRange, reservedSize, contentsOffset, update
    }

    /// Reads the payload; the update's `/Contents` digits are put back.
    /// - Throws: `DecodingError` for a missing or wrong field, bytes that are not base64, or fields
    ///   that do not describe one update (an edited file).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        originalSize = try container.decode(Int64.self, forKey: .originalSize)
        originalSHA256 = try Self.bytes(container, .originalSHA256)
        fieldName = try container.decode(String.self, forKey: .fieldName)
        byteRange = try container.decode([Int64].self, forKey: .byteRange)
        reservedSize = try container.decode(Int.self, forKey: .reservedSize)
        contentsOffset = try container.decode(Int.self, forKey: .contentsOffset)
        let compact = try Self.bytes(container, .update)
        guard (1...(1 << 24)).contains(reservedSize), contentsOffset >= 0, contentsOffset + 2 <= compact.count else {
            throw DecodingError.dataCorruptedError(
                forKey: .contentsOffset,
                in: container,
                debugDescription: "the reserved /Contents does not lie inside the update"
            )
        }
        update =
            Array(compact[...contentsOffset]) + [UInt8](repeating: 0x30, count: reservedSize * 2)
            + compact[(contentsOffset + 1)...]
        if let inconsistency {
            throw DecodingError.dataCorruptedError(forKey: .update, in: container, debugDescription: inconsistency)
        }
    }

    /// Writes the payload: bytes in base64, the update without its `/Contents` digits.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(originalSize, forKey: .originalSize)
        try container.encode(Data(originalSHA256).base64EncodedString(), forKey: .originalSHA256)
        try container.encode(fieldName, forKey: .fieldName)
        try container.encode(byteRange, forKey: .byteRange)
        try container.encode(reservedSize, forKey: .reservedSize)
        try container.encode(contentsOffset, forKey: .contentsOffset)
        let compact = update[...contentsOffset] + update[(contentsOffset + 1 + reservedSize * 2)...]
        try container.encode(Data(compact).base64EncodedString(), forKey: .update)
    }

    private static func bytes(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> [UInt8] {
        guard let data = Data(base64Encoded: try container.decode(String.self, forKey: key)) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not base64")
        }
        return Array(data)
    }
}
