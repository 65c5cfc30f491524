import CMS
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

    /// Checks a document timestamp (PAdES `/Type /DocTimeStamp`, `/SubFilter /ETSI.RFC3161`): the
    /// token in `contents` (zero padding may follow it, as in a PDF's `/Contents`) over the bytes
    /// its ByteRange covers.
    ///
    /// - Parameters:
    ///   - contents: the signature dictionary's `/Contents`: a DER token, then zero bytes.
    ///   - coveredBytes: the bytes the ByteRange covers; the imprint is recomputed over them with
    ///     the token's own digest algorithm.
    ///   - trustAnchors: the TSA's trust anchors (empty: the system trust store).
    ///   - validationTime: when the TSA certificate and chain must be valid.
    ///   - allowedClockSkew: how far `genTime` may lie after `validationTime`.
    /// - Returns: the token's facts and, when a check failed, why (signature, imprint, critical
    ///   timeStamping EKU, chain, genTime, bytes after the token that are not zero padding).
    public static func verifyDocumentTimestamp(
        contents: [UInt8],
        coveredBytes: [UInt8],
        trustAnchors: [Certificate],
        validationTime: Date = Date(),
        allowedClockSkew: TimeInterval = 300
    ) -> TimestampCheck {
        TimestampOpenSSL.verifyPaddedToken(
            contents,
            data: coveredBytes,
            trustAnchors: trustAnchors,
            at: validationTime,
            skew: allowedClockSkew,
            what: "the document timestamp",
            covering: "the signed bytes of the document"
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
