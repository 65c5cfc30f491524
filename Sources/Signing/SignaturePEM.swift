import CMS
import CertificateProviders
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

    /// Whether `bytes` are a PEM block (`-----BEGIN …`) rather than DER.
    public static func isArmored(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: Array("-----BEGIN".utf8))
    }

    /// The DER of `signature`: the CMS inside its `CMS` or `PKCS7` PEM block when it is PEM
    /// (``isArmored(_:)``), else `signature` as it is.
    /// - Throws: `.malformedInput` for PEM text that holds no CMS block.
    public static func der(_ signature: [UInt8]) throws -> [UInt8] {
        guard isArmored(signature) else { return signature }
        guard let der = try CMSContentInfoHandle.derFromPEM(signature) else {
            throw CertificateProviderError(.malformedInput, "the PEM text holds no CMS or PKCS7 block")
        }
        return der
    }

    /// `der` in the encoding `original` has: armoured (``armor(_:)``) when `original` is PEM, else
    /// as it is. A command that rewrites a signature file (adding a timestamp, raising its level)
    /// keeps the file's encoding.
    public static func encoding(_ der: [UInt8], like original: [UInt8]) -> [UInt8] {
        isArmored(original) ? armor(der) : der
    }
}
