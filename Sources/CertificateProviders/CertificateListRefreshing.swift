import Foundation

/// A capability of providers that keep the list of the user's certificates between calls (CryptoPro
/// DSS keeps it with its session): when a server answer shows that list is stale (a signature made by
/// another certificate because the server re-issued it, or a certificate the server no longer knows),
/// the caller asks the provider to list again and select anew, then signs once more.
public protocol CertificateListRefreshing: CertificateProvider {
    /// Lists the user's certificates again and selects anew what the provider was set up for; the new
    /// selection replaces the kept one (callers holding the old identity ask `storedCertificate()`
    /// again).
    /// - Returns: the certificate selected before and now.
    /// - Throws: `.invalidParameter` when the selected certificate is no longer among the user's (the
    ///   reason lists them); the provider's network and store errors.
    func refreshSelectedCertificate() async throws -> CertificateRefresh
}

/// What ``CertificateListRefreshing/refreshSelectedCertificate()`` found: the certificate selected
/// before and the one the server's list gives now for the same selection.
public struct CertificateRefresh: Sendable, Hashable {
    /// The certificate the provider had selected.
    public var previous: Certificate
    /// The certificate the server's list gives now (the provider uses it from now on).
    public var current: Certificate
    /// Its ID on the server, as the server writes it.
    public var certificateID: String
    /// Whether the list changed what is selected (another certificate, or the same ID re-issued).
    public var changed: Bool { previous != current }

    /// Creates a refresh result.
    public init(previous: Certificate, current: Certificate, certificateID: String) {
        self.previous = previous
        self.current = current
        self.certificateID = certificateID
    }
}
