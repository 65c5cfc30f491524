internal import OpenSSLWrappers

/// GOST R 34.10-2012 / 34.11-2012 support: OpenSSL's `gost` engine (Debian's
/// `libengine-gost-openssl`), loaded once per process into the default library context.
///
/// Every part of this package that parses or makes OpenSSL objects loads it first (a
/// certificate's GOST public key is decoded while it is parsed, so the engine must be there
/// before). When the engine is not installed everything else keeps working and GOST operations
/// fail with `.unsupportedAlgorithm` saying what to install.
public enum GOSTEngine {
    /// The Debian package that ships the engine.
    public static let packageName = "libengine-gost-openssl"

    /// Loads the engine on first use; returns whether GOST algorithms are available.
    @discardableResult
    package static func load() -> Bool { GOSTEngineLoader.load() }

    /// Whether GOST keys, signatures and digests (Streebog) can be used in this process.
    public static var isAvailable: Bool { GOSTEngineLoader.load() }

    /// The error for a GOST operation on a machine without the engine.
    /// - Parameter what: what needed GOST ("the certificate's GOST R 34.10-2012 key").
    package static func unavailableError(_ what: String) -> CertificateProviderError {
        CertificateProviderError(
            .unsupportedAlgorithm,
            "GOST needs \(packageName): \(what) uses GOST R 34.10/34.11-2012, and OpenSSL's gost engine could not be "
                + "loaded; install it (apt-get install \(packageName)) or check OPENSSL_ENGINES",
            openSSLErrors: GOSTEngineLoader.loadErrors
        )
    }

    /// Whether a dotted OID is in the Russian national arc (GOST algorithms and parameter sets, 1.2.643).
    package static func isGOSTOID(_ oid: String) -> Bool { oid.hasPrefix("1.2.643.") }
}
