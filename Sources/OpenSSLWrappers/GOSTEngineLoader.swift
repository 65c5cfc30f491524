internal import COpenSSL
internal import COpenSSLShims

/// Loads OpenSSL's `gost` engine (GOST R 34.10/34.11-2012) into the default library context, once
/// per process, and keeps what the one load said.
///
/// Every wrapper that parses or makes OpenSSL objects loads it first (a certificate's GOST public
/// key is decoded while it is parsed, so the engine must be there before). When the engine is not
/// installed everything else keeps working.
package enum GOSTEngineLoader {
    /// The outcome of the one load: whether it worked and, if not, OpenSSL's reasons.
    // Written once by the lazy initializer (swift_once makes it thread-safe), never mutated.
    private static let outcome: (loaded: Bool, errors: [String]) = {
        ERR_clear_error()
        let loaded = COpenSSLShims_GOST_engine_load() == 1
        let errors = OpenSSLErrorQueue.drain()
        return (loaded, loaded ? [] : errors)
    }()

    /// Loads the engine on first use; returns whether GOST algorithms are available.
    @discardableResult
    package static func load() -> Bool { outcome.loaded }

    /// OpenSSL's reasons when the load failed; empty when it worked.
    package static var loadErrors: [String] { outcome.errors }
}
