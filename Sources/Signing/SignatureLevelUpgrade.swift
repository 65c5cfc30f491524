public import CertificateProviders
import Foundation

/// A step that raises a signature the coordinator has just made to a higher level (CAdES-T with a
/// signature timestamp; the long-term levels add validation data the same way) before anything is
/// written or recorded.
///
/// Set it as ``SigningOptions/levelUpgrade``. The coordinator calls ``upgrade(_:)`` once per
/// signature, after the signature is made and before its output file is written and its journal
/// record is added: when it throws, the document gets no output file and no journal record (all or
/// nothing per document), and its error says why.
public protocol SignatureLevelUpgrade: Sendable {
    /// The format of the signatures ``upgrade(_:)`` returns (what the journal records).
    var format: SignatureFormat { get }

    /// What the level needs, for messages: "a signature timestamp from http://tsa.example".
    var requirement: String { get }

    /// Returns `signature` at the higher level.
    /// - Parameter signature: a DER CMS SignedData the coordinator has just made.
    /// - Returns: the upgraded signature and the timestamps added to it.
    /// - Throws: a `CertificateProviderError` saying why the level cannot be met.
    func upgrade(_ signature: [UInt8]) async throws -> UpgradedSignature
}

/// What a ``SignatureLevelUpgrade`` made of a signature.
public struct UpgradedSignature: Sendable {
    /// The upgraded signature (DER).
    public var signature: [UInt8]
    /// The timestamps added to it (empty when the level adds none).
    public var addedTimestamps: [TimestampToken]

    /// Creates the result of an upgrade.
    /// - Parameters:
    ///   - signature: the upgraded signature (DER).
    ///   - addedTimestamps: the timestamps added to it.
    public init(signature: [UInt8], addedTimestamps: [TimestampToken] = []) {
        self.signature = signature
        self.addedTimestamps = addedTimestamps
    }
}

/// CAdES-T: every signer gets an RFC 3161 signature timestamp from one TSA
/// (``SignatureTimestamper/addTimestamps(to:authority:)``).
public struct TimestampLevelUpgrade: SignatureLevelUpgrade {
    /// The TSA client.
    public let authority: TimestampAuthorityClient

    /// Creates the CAdES-T step.
    /// - Parameter authority: the TSA every signature is timestamped at.
    public init(authority: TimestampAuthorityClient) { self.authority = authority }

    /// `.cadesT`.
    public var format: SignatureFormat { .cadesT }

    /// "a signature timestamp from URL".
    public var requirement: String { "a signature timestamp from \(authority.configuration.url.absoluteString)" }

    /// Timestamps every signer of `signature`.
    /// - Throws: the TSA client's errors (`.timestampInvalid`, `.serverRejected`, `.network`,
    ///   `.timeout`, `.cancelled`); `.malformedInput` for a signature that is not CMS.
    public func upgrade(_ signature: [UInt8]) async throws -> UpgradedSignature {
        let result = try await SignatureTimestamper.addTimestamps(to: signature, authority: authority)
        return UpgradedSignature(signature: result.signature, addedTimestamps: result.addedTokens.compactMap { $0 })
    }
}

extension SigningOptions {
    /// The signature after ``levelUpgrade`` (nil without one), for the coordinator.
    /// - Throws: the upgrade's error with its code, its reason saying that `documentName` got no
    ///   signature; `CancellationError` as it is.
    func upgrade(_ signature: [UInt8], of documentName: String) async throws -> UpgradedSignature? {
        guard let levelUpgrade else { return nil }
        do {
            return try await levelUpgrade.upgrade(signature)
        } catch let error as CertificateProviderError where error.code != .cancelled {
            throw CertificateProviderError(
                error.code,
                "'\(documentName)' was not signed: \(levelUpgrade.format.rawValue) needs \(levelUpgrade.requirement), "
                    + "which failed: \(error.reason); no signature was written or recorded",
                openSSLErrors: error.openSSLErrors
            )
        }
    }
}
