internal import CertificateProviders

/// The names of the codes appearances add: each case's name is the code's raw value. `PDFSigning`
/// declares the public static members; this module throws them.
package enum PDFAppearanceCodeName: String {
    /// A font file that is not a font, a default font that is not installed, or a font without a
    /// glyph for some of the text.
    case fontUnusable
    /// An image that is not PNG or JPEG, or is damaged.
    case imageUnusable
}

extension CertificateProviderError {
    /// A font that cannot draw the appearance: `reason` names the file and what is wrong.
    static func fontUnusable(_ reason: String) -> CertificateProviderError {
        CertificateProviderError(Code(PDFAppearanceCodeName.fontUnusable), reason)
    }

    /// An image that cannot be placed: `reason` names the file and what is wrong.
    static func imageUnusable(_ reason: String) -> CertificateProviderError {
        CertificateProviderError(Code(PDFAppearanceCodeName.imageUnusable), reason)
    }
}
