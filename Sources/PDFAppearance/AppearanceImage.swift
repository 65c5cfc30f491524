internal import CPDFAppearanceShims
internal import CertificateProviders
package import Foundation

/// A PNG or JPEG image for an appearance, checked whole when it is read: a PNG is decoded (libpng)
/// into RGB samples and, when any pixel is not opaque, an alpha channel that becomes the image's
/// `/SMask`; a JPEG is decoded once (libjpeg) to refuse damaged data and then embedded as it is
/// (`/DCTDecode`).
package struct AppearanceImage: Sendable {
    /// What the image holds.
    enum Samples: Sendable {
        /// 8-bit RGB samples and, when the image is not opaque, 8-bit alpha.
        case png(rgb: [UInt8], alpha: [UInt8]?)
        /// The JPEG file, its component count and whether its CMYK values are inverted (Adobe).
        case jpeg(data: [UInt8], components: Int, inverted: Bool)
    }

    /// Width in pixels.
    package let width: Int
    /// Height in pixels.
    package let height: Int
    let samples: Samples

    /// Reads the image at `url`.
    /// - Throws: `.imageUnusable` when the file cannot be read, is neither PNG nor JPEG, or is damaged.
    package init(contentsOf url: URL) throws {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: url))
        } catch {
            throw CertificateProviderError.imageUnusable("the image '\(url.path)' cannot be read")
        }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            (width, height, samples) = try Self.decodePNG(bytes, path: url.path)
        } else if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            (width, height, samples) = try Self.inspectJPEG(bytes, path: url.path)
        } else {
            throw CertificateProviderError.imageUnusable("'\(url.path)' is not a PNG or JPEG image")
        }
    }

    private static func decodePNG(_ bytes: [UInt8], path: String) throws -> (Int, Int, Samples) {
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: UInt32 = 0
        var height: UInt32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = bytes.withUnsafeBufferPointer {
            cpdfappearance_png_decode($0.baseAddress, $0.count, &pixels, &width, &height, &message, message.count)
        }
        guard status == 0, let pixels else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw CertificateProviderError.imageUnusable("the PNG image '\(path)' is damaged: \(reason)")
        }
        defer { cpdfappearance_free(pixels) }
        let count = Int(width) * Int(height)
        let rgba = UnsafeBufferPointer(start: pixels, count: count * 4)
        var rgb = [UInt8](repeating: 0, count: count * 3)
        var alpha = [UInt8](repeating: 0, count: count)
        var opaque = true
        for index in 0..<count {
            rgb[index * 3] = rgba[index * 4]
            rgb[index * 3 + 1] = rgba[index * 4 + 1]
            rgb[index * 3 + 2] = rgba[index * 4 + 2]
            alpha[index] = rgba[index * 4 + 3]
            if alpha[index] != 255 { opaque = false }
        }
        return (Int(width), Int(height), .png(rgb: rgb, alpha: opaque ? nil : alpha))
    }

    private static func inspectJPEG(_ bytes: [UInt8], path: String) throws -> (Int, Int, Samples) {
        var width: UInt32 = 0
        var height: UInt32 = 0
        var components: Int32 = 0
        var inverted: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = bytes.withUnsafeBufferPointer {
            cpdfappearance_jpeg_inspect(
                $0.baseAddress,
                $0.count,
                &width,
                &height,
                &components,
                &inverted,
                &message,
                message.count
            )
        }
        guard status == 0 else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw CertificateProviderError.imageUnusable("the JPEG image '\(path)' is damaged: \(reason)")
        }
        guard [1, 3, 4].contains(components) else {
            throw CertificateProviderError.imageUnusable(
                "the JPEG image '\(path)' has \(components) colour components (1, 3 or 4 can be embedded)"
            )
        }
        return (Int(width), Int(height), .jpeg(data: bytes, components: Int(components), inverted: inverted != 0))
    }

    /// The image XObject (and its soft mask), numbered from `numbers`; returns the image's number.
    func objects(_ numbers: inout ObjectNumbers) -> Int {
        let image = numbers.take()
        let size = "/Type /XObject /Subtype /Image /Width \(width) /Height \(height) /BitsPerComponent 8"
        switch samples {
        case .png(let rgb, let alpha):
            var mask = ""
            if let alpha {
                let maskNumber = numbers.take()
                numbers.add(maskNumber, PDFSyntax.stream("\(size) /ColorSpace /DeviceGray", alpha))
                mask = " /SMask \(maskNumber) 0 R"
            }
            numbers.add(image, PDFSyntax.stream("\(size) /ColorSpace /DeviceRGB\(mask)", rgb))
        case .jpeg(let data, let components, let inverted):
            let space = ["/DeviceGray", "", "/DeviceRGB", "/DeviceCMYK"][components - 1]
            let decode = inverted ? " /Decode [1 0 1 0 1 0 1 0]" : ""
            numbers.add(
                image,
                PDFSyntax.stream("\(size) /ColorSpace \(space)\(decode) /Filter /DCTDecode", data, compressed: false)
            )
        }
        return image
    }
}
