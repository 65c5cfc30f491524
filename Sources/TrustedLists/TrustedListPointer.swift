public import CertificateProviders

/// A pointer of a list to another list (`OtherTSLPointer`): in the LOTL, one per member state's TL,
/// naming where it is and which certificates may sign it.
public struct TrustedListPointer: Sendable {
    /// Where the list is published (`TSLLocation`).
    public let location: String
    /// The pointed list's territory (`SchemeTerritory`: `BE`, `EU`, …).
    public let territory: String
    /// The pointed list's type (`TSLType` URI), when given.
    public let type: String?
    /// The pointed list's MIME type (`application/vnd.etsi.tsl+xml` for the XML form), when given.
    public let mimeType: String?
    /// The certificates that may sign the pointed list (its `ServiceDigitalIdentities`).
    public let signers: [Certificate]

    /// Creates a pointer.
    public init(location: String, territory: String, type: String?, mimeType: String?, signers: [Certificate]) {
        self.location = location
        self.territory = territory
        self.type = type
        self.mimeType = mimeType
        self.signers = signers
    }

    /// Whether it points to the XML form of a list (not its PDF).
    public var isXML: Bool { mimeType == nil || mimeType == "application/vnd.etsi.tsl+xml" }
}
