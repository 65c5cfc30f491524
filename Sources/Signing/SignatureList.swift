public import CertificateProviders
internal import Foundation

/// The merged list of signatures.
public struct SignatureList: Sendable {
    /// Every entry, newest first (entries without a time last).
    public let entries: [SignatureEntry]
    /// Providers whose server history could not be read, with the reason; their entries are missing.
    public let unavailable: [ProviderID: CertificateProviderError]
}
