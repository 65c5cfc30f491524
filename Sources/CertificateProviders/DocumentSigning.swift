import Foundation

/// A capability of providers whose server builds the whole signature (CryptoPro DSS returns a
/// finished CAdES): the coordinator sends the document instead of building the CMS locally.
public protocol DocumentSigning: CertificateProvider {
    /// Signs a document on the server.
    ///
    /// - Returns: the DER-encoded CMS SignedData (ContentInfo) the server produced.
    /// - Throws: `.serverRejected`, `.authenticationFailed`, `.network`, `.timeout`,
    ///   `.unsupportedAlgorithm` (format or digest the server cannot make).
    func signDocument(_ request: DocumentSigningRequest) async throws -> [UInt8]
}
