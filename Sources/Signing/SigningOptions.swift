public import CertificateProviders
public import Foundation

/// How the coordinator signs.
public struct SigningOptions: Sendable {
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
    /// A level the signature must reach before it is written or recorded (CAdES-T with
    /// ``TimestampLevelUpgrade``); nil (default) keeps the signature as made. When the upgrade fails,
    /// the document gets no output file and no journal record.
    public var levelUpgrade: (any SignatureLevelUpgrade)?
    /// Whether output files get the PEM form (``SignaturePEM``) instead of DER. Default false. The
    /// result's signature and a journal row that keeps the signature itself stay DER.
    public var writesPEM: Bool

    /// Creates options; every parameter has the documented default.
    public init(
        format: SignatureFormat = .cadesBES,
        isDetached: Bool = true,
        digestAlgorithm: DigestAlgorithm? = nil,
        signingTime: Date? = nil,
        chunkSize: Int = CMSSigner.defaultChunkSize,
        levelUpgrade: (any SignatureLevelUpgrade)? = nil,
        writesPEM: Bool = false
    ) {
        self.format = format
        self.isDetached = isDetached
        self.digestAlgorithm = digestAlgorithm
        self.signingTime = signingTime
        self.chunkSize = chunkSize
        self.levelUpgrade = levelUpgrade
        self.writesPEM = writesPEM
    }
}
