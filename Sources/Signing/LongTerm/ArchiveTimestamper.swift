import CertificateProviders
import Foundation

/// Adds a CAdES `archive-time-stamp-v3` (with its `ats-hash-index-v3`) to every SignerInfo of a
/// signature: B-LT → B-LTA, and each renewal of a B-LTA signature.
enum ArchiveTimestamper {
    /// Timestamps every SignerInfo's archive data (ETSI EN 319 122-1 §5.5.3) at `authority`.
    /// - Returns: the signature with one more archive timestamp per signer, and the tokens.
    /// - Throws: the TSA client's errors; `.unsupportedAlgorithm` when a signer's digest is not the
    ///   TSA client's; `.malformedInput` for bytes that are not DER SignedData.
    static func addArchiveTimestamps(
        to signature: [UInt8],
        authority: TimestampAuthorityClient
    ) async throws -> (signature: [UInt8], addedTokens: [TimestampToken]) {
        // Every signer's archive data is read from the same bytes: one signer's new attribute
        // changes neither another's SignerInfo fields nor SignedData's certificates and CRLs.
        let count = try CMSTimestamping.signerInfos(of: try CMSTimestamping.parse(signature)).count
        var indexed: [[UInt8]] = []
        var added: [TimestampToken] = []
        for index in 0..<count {
            let input = try ArchiveTimestampAttribute.input(
                signature: signature,
                signerIndex: index,
                digest: authority.configuration.digestAlgorithm
            )
            let token = try await authority.timestamp(input.imprintData)
            indexed.append(try ArchiveTimestampAttribute.addHashIndex(input.hashIndex, to: token.derRepresentation))
            added.append(token)
        }
        let cms = try CMSTimestamping.parse(signature)
        for (info, token) in zip(try CMSTimestamping.signerInfos(of: cms), indexed) {
            try ArchiveTimestampAttribute.addAttribute(
                ArchiveTimestampAttribute.archiveTimestampV3,
                value: token,
                to: info
            )
        }
        let current = try cms.derBytes()
        return (current, added)
    }
}
