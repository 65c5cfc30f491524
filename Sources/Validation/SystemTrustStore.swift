internal import COpenSSL
public import CertificateProviders
import Foundation

/// The operating system's bundle of trusted root certificates (Debian's and Ubuntu's
/// `ca-certificates`: `/etc/ssl/certs/ca-certificates.crt`), found the way OpenSSL finds it: the
/// file the `SSL_CERT_FILE` environment variable names, else OpenSSL's built-in default
/// (`X509_get_default_cert_file()`, on Debian `/usr/lib/ssl/cert.pem`, a link to the bundle).
///
/// ``CMSVerifier`` never consults it on its own: pass its certificates as the trust anchors (alone,
/// or beside your own) to trust what the system trusts, as `certsign verify` does when no `--ca` is
/// given or with `--trust system`.
///
/// ```swift
/// let anchors = try SystemTrustStore.certificates() + myRoots
/// let result = CMSVerifier.verify(signature: p7s, content: document, trustAnchors: anchors)
/// ```
public enum SystemTrustStore {
    /// The bundle's path: `SSL_CERT_FILE` when set and not empty, else OpenSSL's default file.
    public static var path: String {
        let variable = String(cString: X509_get_default_cert_file_env())
        if let named = ProcessInfo.processInfo.environment[variable], !named.isEmpty { return named }
        return String(cString: X509_get_default_cert_file())
    }

    /// The bundle's certificates.
    /// - Throws: `.fileSystem` naming the path when it cannot be read (install `ca-certificates`,
    ///   or set `SSL_CERT_FILE`); `.malformedInput` when it holds no certificate.
    public static func certificates() throws -> [Certificate] {
        let path = path
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CertificateProviderError(
                .fileSystem,
                "the system's trusted certificates cannot be read from '\(path)': install the ca-certificates "
                    + "package, or name a bundle with SSL_CERT_FILE"
            )
        }
        let certificates = try Certificate.certificates(derOrPEM: Array(data))
        guard !certificates.isEmpty else {
            throw CertificateProviderError.malformedInput("the system's trust bundle '\(path)' holds no certificate")
        }
        return certificates
    }
}
