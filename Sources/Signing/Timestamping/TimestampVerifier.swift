public import CertificateProviders
public import Foundation

/// Checks RFC 3161 signature timestamps (CAdES-T) with OpenSSL's TS API.
public enum TimestampVerifier {
    /// Checks one timestamp token against the data it must cover.
    ///
    /// - Parameters:
    ///   - token: the DER token (CMS ContentInfo with a TSTInfo).
    ///   - data: the timestamped bytes: for a signature timestamp, the SignerInfo's signature value.
    ///     The imprint is recomputed with the token's own digest algorithm.
    ///   - trustAnchors: the certificates the TSA's chain must lead to. Empty: the system trust
    ///     store (`/etc/ssl/certs`).
    ///   - validationTime: when the TSA certificate and chain must be valid (default now).
    ///   - allowedClockSkew: how far `genTime` may lie after `validationTime` (default 5 minutes).
    /// - Returns: the token's facts and, when a check failed, why.
    public static func verify(
        token: [UInt8],
        data: [UInt8],
        trustAnchors: [Certificate],
        validationTime: Date = Date(),
        allowedClockSkew: TimeInterval = 300
    ) -> TimestampCheck {
        TimestampOpenSSL.verifyToken(
            token,
            data: data,
            trustAnchors: trustAnchors,
            at: validationTime,
            skew: allowedClockSkew
        )
    }

    /// The timestamp tokens of each SignerInfo of a CMS signature, in SignerInfo order, with the
    /// signature value each must cover.
    ///
    /// - Parameter signature: DER, BER or PEM CMS SignedData.
    /// - Returns: one entry per SignerInfo: its signature value and its tokens (empty when none).
    /// - Throws: `.malformedInput` when the bytes are not CMS SignedData.
    public static func signatureTimestamps(
        in signature: [UInt8]
    ) throws -> [(signatureValue: [UInt8], tokens: [[UInt8]])] {
        let cms = try CMSTimestamping.parse(signature)
        return try CMSTimestamping.signerInfos(of: cms).map { info in
            (CMSTimestamping.signatureValue(of: info), CMSTimestamping.tokens(of: info))
        }
    }
}
