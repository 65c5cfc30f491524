public import CertificateProviders
public import Foundation

/// A verified ETSI TS 119 612 trusted list: the EU list of the lists (LOTL) or a member state's
/// trusted list (TL). Made only by ``load(contentsOf:signers:at:limits:)`` or
/// ``init(xml:name:signers:at:limits:)``, which check its XML signature and its `NextUpdate` first.
public struct TrustedList: Sendable {
    /// The ETSI TS 119 612 v2 namespace every list's elements are in.
    public static let namespace = "http://uri.etsi.org/02231/v2#"
    /// The `TSLType` of the EU list of the lists.
    public static let listOfTheListsType = "http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUlistofthelists"

    /// What the list calls itself in errors and displays (its file name, or what the caller gave).
    public let name: String
    /// The list's type (`TSLType` URI).
    public let type: String
    /// The territory (`SchemeTerritory`: `EU` for the LOTL, `BE`, …).
    public let territory: String
    /// The sequence number (`TSLSequenceNumber`).
    public let sequenceNumber: Int
    /// The scheme operator's name (English when given).
    public let schemeOperatorName: String
    /// When it was issued (`ListIssueDateTime`).
    public let issued: Date
    /// When the next list is due (`NextUpdate`); a list past it is refused.
    public let nextUpdate: Date
    /// Its pointers to other lists (in the LOTL: the member states' TLs).
    public let pointers: [TrustedListPointer]
    /// Its trust services, every provider's, in document order.
    public let services: [TrustService]
    /// The certificate whose key verified the list's signature (one of those given).
    public let signer: Certificate

    /// Whether this is the EU list of the lists.
    public var isListOfTheLists: Bool { type == Self.listOfTheListsType }

    /// Creates a list from verified fields (the loader's job).
    init(
        name: String,
        fields: TrustedListReader.Fields,
        nextUpdate: Date,
        pointers: [TrustedListPointer],
        services: [TrustService],
        signer: Certificate
    ) {
        self.name = name
        type = fields.type
        territory = fields.territory
        sequenceNumber = fields.sequenceNumber
        schemeOperatorName = fields.schemeOperatorName
        issued = fields.issued
        self.nextUpdate = nextUpdate
        self.pointers = pointers
        self.services = services
        self.signer = signer
    }
}
