/// What a PDF signature field's value is.
public struct PDFSignatureKind: Sendable, Hashable, CustomStringConvertible {
    /// The raw value: `signature` or `documentTimestamp`.
    public let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// A CMS signature (`/Type /Sig`: `adbe.pkcs7.detached`, `ETSI.CAdES.detached`, …).
    public static let signature = PDFSignatureKind("signature")
    /// A document timestamp (`/Type /DocTimeStamp`, `/SubFilter /ETSI.RFC3161`): an RFC 3161 token
    /// over the revision's bytes, proving they existed at its time (PAdES B-LTA).
    public static let documentTimestamp = PDFSignatureKind("documentTimestamp")

    /// The raw value.
    public var description: String { rawValue }
}
