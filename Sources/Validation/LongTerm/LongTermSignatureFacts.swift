import CMS
internal import COpenSSL
import CertificateProviders
public import Foundation

/// What a CMS signature is as a long-term signature: its CAdES baseline level, whether it is
/// detached, and whether a document is the one it signed. For `certsign extend` and `verify`.
public struct LongTermSignatureFacts: Sendable {
    /// The level found: B-LTA with an archive-time-stamp-v3, B-LT with revocation data in
    /// SignedData and a signature timestamp, B-T with a signature timestamp, else B-B.
    public let level: SignatureLevel
    /// Whether the signed content is left out.
    public let isDetached: Bool
    /// How many archive timestamps the signers carry.
    public let archiveTimestampCount: Int
    /// How many CRLs and OCSP responses SignedData carries.
    public let embeddedCRLCount: Int
    /// How many RFC 5940 OCSP responses SignedData carries.
    public let embeddedOCSPCount: Int

    /// Reads the facts of a DER signature.
    /// - Throws: `.malformedInput` when the bytes are not DER CMS SignedData.
    public init(signature: [UInt8]) throws {
        let cms = try CMSTimestamping.parse(signature)
        let infos = try CMSTimestamping.signerInfos(of: cms)
        let contents = try CMSValidationData.contents(of: signature)
        isDetached = CMS_is_detached(cms.pointer) == 1
        archiveTimestampCount = infos.map { ArchiveTimestampAttribute.tokens(of: $0).count }.reduce(0, +)
        embeddedCRLCount = contents.crls.count
        embeddedOCSPCount = contents.ocspResponses.count
        let timestamped = infos.allSatisfy { !CMSTimestamping.tokens(of: $0).isEmpty }
        if timestamped && archiveTimestampCount > 0 {
            level = .bLTA
        } else if timestamped && embeddedCRLCount + embeddedOCSPCount > 0 {
            level = .bLT
        } else {
            level = timestamped ? .bT : .bB
        }
    }

    /// Checks that the detached `signature` signed the file at `content`: its hash with each
    /// signer's digest algorithm equals the signer's messageDigest.
    /// - Throws: `.invalidParameter` naming the file when it is not the signed document;
    ///   `.fileSystem` when it cannot be read; `.malformedInput` for a signature that is not CMS.
    public static func checkContent(of signature: [UInt8], file content: URL) async throws {
        let cms = try CMSTimestamping.parse(signature)
        for info in try CMSTimestamping.signerInfos(of: cms) {
            let (algorithm, expected) = try ArchiveTimestampAttribute.signedDigest(of: info)
            let computed = try await FileDigest.compute(
                url: content,
                algorithm: algorithm,
                chunkSize: FileDigest.defaultChunkSize,
                progress: nil
            )
            guard computed.digest == expected else {
                throw CertificateProviderError(
                    .invalidParameter,
                    "\(content.path) is not the document the signature signed (its \(algorithm.displayName) digest "
                        + "differs from the signature's messageDigest): give the signed document with --content"
                )
            }
        }
    }
}
