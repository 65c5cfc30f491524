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
        var current = signature
        var added: [TimestampToken] = []
        let count = try CMSTimestamping.signerInfos(of: try CMSTimestamping.parse(signature)).count
        for index in 0..<count {
            let input = try ArchiveTimestampAttribute.input(
                signature: current,
                signerIndex: index,
                digest: authority.configuration.digestAlgorithm
            )
            let token = try await authority.timestamp(input.imprintData)
            let indexed = try ArchiveTimestampAttribute.addHashIndex(input.hashIndex, to: token.derRepresentation)
            let cms = try CMSTimestamping.parse(current)
            let info = try CMSTimestamping.signerInfos(of: cms)[index]
            try ArchiveTimestampAttribute.addAttribute(
                ArchiveTimestampAttribute.archiveTimestampV3,
                value: indexed,
                to: info
            )
            current = try cms.derBytes()
            added.append(token)
        }
        return (current, added)
    }
}
