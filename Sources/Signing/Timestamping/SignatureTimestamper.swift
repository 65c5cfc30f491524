import CertificateProviders
import Foundation

/// Turns CMS / CAdES-BES signatures into CAdES-T: each SignerInfo gets an RFC 3161 timestamp over
/// its signature value as the unsigned attribute `id-aa-signatureTimeStampToken`
/// (1.2.840.113549.1.9.16.2.14). Signed content and signed attributes are not touched, so every
/// existing signature value stays valid.
public enum SignatureTimestamper {
    /// What ``addTimestamps(to:authority:)`` did.
    public struct Result: Sendable {
        /// The CAdES-T signature (DER).
        public let signature: [UInt8]
        /// One entry per SignerInfo, in order: the new token, or nil when the signer already had
        /// one and was left as it was.
        public let addedTokens: [TimestampToken?]

        /// How many signers got a new timestamp.
        public var addedCount: Int { addedTokens.compactMap { $0 }.count }
    }

    /// Timestamps every SignerInfo of `signature` that has no signature timestamp yet.
    ///
    /// - Parameters:
    ///   - signature: DER, BER or PEM CMS SignedData (CAdES-BES or plain CMS).
    ///   - authority: the TSA client (its response checks apply to every token).
    /// - Returns: the new signature and the tokens added.
    /// - Throws: `.malformedInput` when `signature` is not CMS SignedData; the TSA client's errors
    ///   (`.timestampInvalid`, `.serverRejected`, `.network`, `.timeout`); nothing is returned
    ///   half-done.
    public static func addTimestamps(to signature: [UInt8], authority: TimestampAuthorityClient) async throws -> Result
    {
        let signers = try TimestampVerifier.signatureTimestamps(in: signature)
        var tokens: [TimestampToken?] = []
        for signer in signers {
            if signer.tokens.isEmpty {
                tokens.append(try await authority.timestamp(signer.signatureValue))
            } else {
                tokens.append(nil)
            }
        }
        return Result(signature: try insert(tokens.map { $0?.derRepresentation }, into: signature), addedTokens: tokens)
    }

    /// Adds one token per SignerInfo (nil entries are skipped) and re-encodes the signature.
    static func insert(_ tokens: [[UInt8]?], into signature: [UInt8]) throws -> [UInt8] {
        let cms = try CMSTimestamping.parse(signature)
        let infos = try CMSTimestamping.signerInfos(of: cms)
        guard infos.count == tokens.count else {
            throw CertificateProviderError.malformedInput("the signature changed while it was timestamped")
        }
        for (info, token) in zip(infos, tokens) {
            guard let token else { continue }
            try CMSTimestamping.addToken(token, to: info)
        }
        return try cms.derBytes()
    }
}
