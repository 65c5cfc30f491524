public import CertificateProviders
public import Foundation
public import SignatureJournal

/// What ``SigningCoordinator/sign(document:provider:parameters:options:output:progress:)`` made.
public struct SigningResult: Sendable {
    /// The journal record (its ID is the signature's ID).
    public let record: SignatureRecord
    /// The DER CMS signature.
    public let signature: [UInt8]
    /// The `.p7s` file written, when an output was given.
    public let outputURL: URL?
    /// The certificate that signed.
    public let signerCertificate: Certificate
    /// The timestamps ``SigningOptions/levelUpgrade`` added (empty without one).
    public internal(set) var addedTimestamps: [TimestampToken] = []
}
