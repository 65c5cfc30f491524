import CertificateProviders
internal import Durability
import Foundation
import Glibc

/// Raw byte access to a PDF file with POSIX calls (positional reads, flat memory): the facts qpdf's
/// C API does not give — where the last cross-reference section is and which kind it is, and
/// where each revision ends.
struct PDFFile: ~Copyable {
    /// The kind of a cross-reference section.
    enum XrefKind: Sendable, Equatable {
        /// `xref` … `trailer` (also the classic part of a hybrid file).
        case table
        /// A `/Type /XRef` stream object.
        case stream
    }

    let path: String
    let descriptor: Int32
    let size: Int64

    init(path: String, writable: Bool = false) throws {
        self.path = path
        descriptor = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileSystem.failure("cannot open", path) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let failure = FileSystem.failure("cannot read", path)
            close(descriptor)
            throw failure
        }
        size = Int64(info.st_size)
    }

    deinit { close(descriptor) }

    /// Reads `count` bytes at `offset` (fewer at the end of the file).
    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw FileSystem.failure("cannot read", path)
            }
            if got == 0 { break }
            done += got
        }
        return Array(bytes[0..<done])
    }

    /// Writes `bytes` at `offset`.
    func write(_ bytes: [UInt8], at offset: Int64) throws {
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            }
            if wrote < 0 {
                if errno == EINTR { continue }
                throw FileSystem.failure("cannot write", path)
            }
            done += wrote
        }
    }

    /// Calls `body` with the bytes of `range`, 1 MiB at a time.
    func forEachChunk(in range: Range<Int64>, _ body: (UnsafeRawBufferPointer) -> Void) throws {
        var offset = range.lowerBound
        while offset < range.upperBound {
            let chunk = try read(at: offset, count: Int(min(Int64(1 << 20), range.upperBound - offset)))
            guard !chunk.isEmpty else {
                throw CertificateProviderError(.malformedInput, "'\(path)' ends before byte \(range.upperBound)")
            }
            chunk.withUnsafeBytes(body)
            offset += Int64(chunk.count)
        }
    }

    /// Cuts or extends the file to `size` bytes.
    func truncate(to size: Int64) throws {
        guard ftruncate(descriptor, off_t(size)) == 0 else { throw FileSystem.failure("cannot resize", path) }
    }

    func sync() throws {
        guard fsync(descriptor) == 0 else { throw FileSystem.failure("cannot sync", path) }
    }

    /// The offset of the last cross-reference section (the number after the last `startxref`) and
    /// its kind.
    func lastCrossReference() throws -> (offset: Int64, kind: XrefKind) {
        let tailLength = Int(min(size, 4096))
        let tail = try read(at: size - Int64(tailLength), count: tailLength)
        guard let marker = PDFBytes.lastIndex(of: Array("startxref".utf8), in: tail) else {
            throw CertificateProviderError(
                .malformedInput,
                "'\(path)' has no startxref near its end: it is not a complete PDF"
            )
        }
        var index = marker + 9
        while index < tail.count, PDFBytes.isWhitespace(tail[index]) { index += 1 }
        var offset: Int64 = 0
        var digits = 0
        while index < tail.count, tail[index] >= 0x30, tail[index] <= 0x39, digits < 19 {
            offset = offset * 10 + Int64(tail[index] - 0x30)
            index += 1
            digits += 1
        }
        guard digits > 0, offset < size else {
            throw CertificateProviderError(.malformedInput, "'\(path)' has an unreadable startxref offset")
        }
        let head = try read(at: offset, count: 64)
        var start = 0
        while start < head.count, PDFBytes.isWhitespace(head[start]) { start += 1 }
        if Array(head[start...]).starts(with: Array("xref".utf8)) { return (offset, .table) }
        if let text = String(bytes: head[start...], encoding: .isoLatin1),
            text.range(of: #"^\d+\s+\d+\s+obj"#, options: .regularExpression) != nil
        {
            return (offset, .stream)
        }
        throw CertificateProviderError(
            .malformedInput,
            "'\(path)': startxref does not point at a cross-reference section"
        )
    }

    /// The end offsets of every `%%EOF` marker (just after the marker), in file order, read in
    /// chunks. A linearized file has one more than its number of updates (its first-page section).
    func endOfFileMarkers() throws -> [Int64] {
        try positions(of: Array("%%EOF".utf8)).map { $0 + 5 }
    }

    /// The offset of every occurrence of `marker` in the file, in file order, read in chunks.
    func positions(of marker: [UInt8]) throws -> [Int64] {
        var ends: [Int64] = []
        var carry: [UInt8] = []
        var base: Int64 = 0
        try forEachChunk(in: 0..<size) { chunk in
            let window = carry + Array(chunk.bindMemory(to: UInt8.self))
            // memchr and memcmp: this pass runs over every byte of the file.
            window.withUnsafeBytes { haystack in
                marker.withUnsafeBytes { needle in
                    guard let start = haystack.baseAddress, haystack.count >= needle.count else { return }
                    var index = 0
                    let last = haystack.count - needle.count
                    while index <= last,
                        let hit = memchr(start + index, Int32(marker[0]), last - index + 1)
                    {
                        let found = UnsafeRawPointer(hit) - start
                        if memcmp(start + found, needle.baseAddress!, needle.count) == 0 {
                            let end = base - Int64(carry.count) + Int64(found)
                            if ends.last != end { ends.append(end) }
                        }
                        index = found + 1
                    }
                }
            }
            base += Int64(chunk.count)
            carry = Array(window.suffix(marker.count - 1))
        }
        return ends
    }
}

/// Byte-level helpers for PDF syntax.
enum PDFBytes {
    static func isWhitespace(_ byte: UInt8) -> Bool { [0x00, 0x09, 0x0A, 0x0C, 0x0D, 0x20].contains(byte) }

    static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int = 0) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else {
            return nil
        }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }

    static func lastIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = haystack.count - needle.count
        while index >= 0 {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index
            }
            index -= 1
        }
        return nil
    }

    static let hexDigits = Array("0123456789ABCDEF".utf8)

    static func hex(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0F)])
        }
        return out
    }

    /// Decodes hex digits (whitespace skipped); nil on any other byte.
    static func unhex(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 2)
        var high: UInt8?
        for byte in text {
            let value: UInt8
            switch byte {
            case 0x30...0x39: value = byte - 0x30
            case 0x41...0x46: value = byte - 0x41 + 10
            case 0x61...0x66: value = byte - 0x61 + 10
            default:
                if isWhitespace(byte) { continue }
                return nil
            }
            if let first = high {
                out.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        if let high { out.append(high << 4) }
        return out
    }

    /// A PDF text string as a hex string: PDFDocEncoding-compatible ASCII as is, anything else as
    /// UTF-16BE with a byte order mark.
    static func textString(_ text: String) -> String {
        let ascii = text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
        let bytes: [UInt8] =
            ascii ? Array(text.utf8) : [0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        return "<" + String(decoding: hex(bytes), as: UTF8.self) + ">"
    }

    /// A PDF date, UTC: `D:YYYYMMDDHHmmss+00'00'`.
    static func date(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "D:%04d%02d%02d%02d%02d%02d+00'00'",
            c.year!,
            c.month!,
            c.day!,
            c.hour!,
            c.minute!,
            c.second!
        )
    }

    /// Reads a PDF date (`D:YYYYMMDDHHmmSS` with optional `Z` or `±HH'mm'`); nil when unreadable.
    static func parseDate(_ text: String) -> Date? {
        var text = Substring(text)
        if text.hasPrefix("D:") { text = text.dropFirst(2) }
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard digits.count >= 4 else { return nil }
        func part(_ start: Int, _ length: Int, _ fallback: Int) -> Int {
            let chars = Array(digits)
            guard chars.count >= start + length else { return fallback }
            return Int(String(chars[start..<(start + length)])) ?? fallback
        }
        var components = DateComponents()
        components.year = part(0, 4, 0)
        components.month = part(4, 2, 1)
        components.day = part(6, 2, 1)
        components.hour = part(8, 2, 0)
        components.minute = part(10, 2, 0)
        components.second = part(12, 2, 0)
        var offset = 0
        let rest = Array(text.dropFirst(digits.count))
        if let sign = rest.first, sign == "+" || sign == "-" {
            let numbers = rest.dropFirst().filter { $0.isNumber }
            let hours = numbers.count >= 2 ? Int(String(numbers.prefix(2))) ?? 0 : 0
            let minutes = numbers.count >= 4 ? Int(String(numbers.dropFirst(2).prefix(2))) ?? 0 : 0
            offset = (hours * 3600 + minutes * 60) * (sign == "+" ? 1 : -1)
        }
        components.timeZone = TimeZone(secondsFromGMT: offset)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: components)
    }
}
