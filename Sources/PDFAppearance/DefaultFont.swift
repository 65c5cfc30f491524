internal import CertificateProviders
package import Foundation

/// The font appearances use when none is given: DejaVu Sans from Debian's fonts-dejavu-core, which
/// covers Latin, Cyrillic and Greek. Looked for when it is needed, not when the program starts.
package enum DefaultFont {
    /// Where Debian installs it.
    package static let path = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    /// The Debian package that installs it.
    package static let debianPackage = "fonts-dejavu-core"

    /// The default font's file (at `path`, Debian's place unless a caller looks elsewhere).
    /// - Throws: `.fontUnusable` naming the package to install when it is missing.
    package static func locate(at path: String = path) throws -> URL {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw CertificateProviderError.fontUnusable(
                "the default appearance font \(path) is not installed: install the Debian package \(debianPackage) "
                    + "(apt-get install \(debianPackage)) or give a font with --font FILE"
            )
        }
        return URL(fileURLWithPath: path)
    }
}
