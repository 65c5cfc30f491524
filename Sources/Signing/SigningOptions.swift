public import CertificateProviders
public import Foundation

/// How the coordinator signs.
public struct SigningOptions: Sendable, Hashable {
    /// The container format. Default `.cadesBES`.
    public var format: SignatureFormat
    /// Whether the signature leaves the content out. Default true.
    public var isDetached: Bool
    /// The digest algorithm; nil (default) takes the one that fits the signer's key
    /// (`DigestAlgorithm.preferred(for:)`: Streebog-256/512 for GOST keys, SHA-256 otherwise).
    public var digestAlgorithm: DigestAlgorithm?
    /// The signing-time attribute; nil (default) means the moment of signing.
    public var signingTime: Date?
    /// Bytes per read when streaming a file. Default 1 MiB.
    public var chunkSize: Int

    /// Creates options; every parameter has the documented default.
    public init(
        format: SignatureFormat = .cadesBES,
        isDetached: Bool = true,
        digestAlgorithm: DigestAlgorithm? = nil,
        signingTime: Date? = nil,
        chunkSize: Int = CMSSigner.defaultChunkSize
    ) {
        self.format = format
        self.isDetached = isDetached
        self.digestAlgorithm = digestAlgorithm
        self.signingTime = signingTime
        self.chunkSize = chunkSize
    }
}
