public import CertificateProviders
import Foundation

/// CAdES B-LT and B-LTA (ETSI EN 319 122-1 §5.5.3, as EU DSS's `CAdESLevelBaselineLT` and
/// `CAdESLevelBaselineLTA` build them), as a ``SignatureLevelUpgrade`` for ``SigningOptions`` and for
/// extending existing signatures (`certsign extend`).
///
/// The steps, each only when the signature lacks it: a signature timestamp for every signer (B-T);
/// the certificates of the signer's path and of every timestamp's TSA path into
/// `SignedData.certificates`, their CRLs into `SignedData.crls` and their OCSP responses as
/// RFC 5940 `id-ri-ocsp-response` entries (B-LT); for B-LTA an `archive-time-stamp-v3` with its
/// `ats-hash-index-v3` over it all. Extending a B-LTA signature again (renewal) first adds the
/// validation data of its last archive timestamp, then a further archive timestamp.
public struct LongTermLevelUpgrade: SignatureLevelUpgrade {
    /// The level reached: ``SignatureLevel/bLT`` or ``SignatureLevel/bLTA``.
    public let level: SignatureLevel
    /// The TSA of the signature (and archive) timestamps.
    public let authority: TimestampAuthorityClient
    /// Where the validation data comes from (share its cache across a run).
    public let collector: ValidationDataCollector

    /// Creates the step.
    /// - Parameters:
    ///   - level: B-LT or B-LTA.
    ///   - authority: the TSA.
    ///   - collector: the validation data source.
    /// - Throws: `.invalidParameter` for a level below B-LT.
    public init(level: SignatureLevel, authority: TimestampAuthorityClient, collector: ValidationDataCollector) throws {
        try level.requireLongTerm(belowHint: "use TimestampLevelUpgrade for B-T")
        self.level = level
        self.authority = authority
        self.collector = collector
    }

    /// `.cadesLT` or `.cadesLTA`.
    public var format: SignatureFormat { level.cadesFormat }

    /// What the level needs, for messages.
    public var requirement: String {
        "a signature timestamp from \(authority.configuration.url.absoluteString) and a revocation answer for every "
            + "certificate of the signer's and the TSA's paths"
            + (level == .bLTA ? ", then an archive timestamp" : "")
    }

    /// Raises `signature` to ``level``.
    /// - Throws: the TSA client's errors; `.revocationUnavailable` naming a certificate without an
    ///   answer; `.certificateRevoked`; `.malformedInput` for bytes that are not CMS SignedData.
    public func upgrade(_ signature: [UInt8]) async throws -> UpgradedSignature {
        let timestamped = try await SignatureTimestamper.addTimestamps(to: signature, authority: authority)
        var added = timestamped.addedTokens.compactMap { $0 }
        var current = timestamped.signature
        let tokens = try Self.timestampTokens(in: current)
        let data = try await collector.collect(signature: current, tokens: tokens)
        current = try CMSValidationData.embed(data, into: current)
        if level == .bLTA {
            let archived = try await ArchiveTimestamper.addArchiveTimestamps(to: current, authority: authority)
            current = archived.signature
            added += archived.addedTokens
        }
        return UpgradedSignature(signature: current, addedTimestamps: added)
    }

    /// Every signature and archive timestamp token of every SignerInfo.
    package static func timestampTokens(in signature: [UInt8]) throws -> [[UInt8]] {
        let cms = try CMSTimestamping.parse(signature)
        return try CMSTimestamping.signerInfos(of: cms).flatMap { info in
            CMSTimestamping.tokens(of: info) + ArchiveTimestampAttribute.tokens(of: info)
        }
    }
}

extension SigningOptions {
    /// The ``levelUpgrade`` that makes signatures at `level`.
    ///
    /// - Parameters:
    ///   - level: the level (B-B: nil; B-T: ``TimestampLevelUpgrade``; B-LT, B-LTA:
    ///     ``LongTermLevelUpgrade``).
    ///   - authority: the TSA, needed from B-T up.
    ///   - collector: the validation data source, needed from B-LT up.
    /// - Throws: `.invalidParameter` when the level needs a TSA or a collector that was not given.
    public static func levelUpgrade(
        for level: SignatureLevel,
        authority: TimestampAuthorityClient?,
        collector: ValidationDataCollector?
    ) throws -> (any SignatureLevelUpgrade)? {
        if level == .bB { return nil }
        guard let authority else {
            throw CertificateProviderError(.invalidParameter, "\(level) needs a time-stamping authority (--tsa URL)")
        }
        if level == .bT { return TimestampLevelUpgrade(authority: authority) }
        guard let collector else {
            throw CertificateProviderError(.invalidParameter, "\(level) needs a validation data collector")
        }
        return try LongTermLevelUpgrade(level: level, authority: authority, collector: collector)
    }
}
