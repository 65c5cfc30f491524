import Foundation

/// The PEM form of a CMS signature, as `openssl cms -outform PEM` writes it.
public enum SignaturePEM {
    /// `der` armoured as `-----BEGIN CMS-----`, base64 in 64-column lines, each ending in a line feed.
    /// - Parameter der: a DER (or BER) CMS ContentInfo.
    /// - Returns: the PEM text's bytes (ASCII).
    public static func armor(_ der: [UInt8]) -> [UInt8] {
        let base64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return Array("-----BEGIN CMS-----\n\(base64)\n-----END CMS-----\n".utf8)
    }
}
