public import CertificateProviders
public import Foundation

/// Verified trusted lists used together: a LOTL and the TLs it points to (or TLs alone), their
/// services as trust anchors, and the judgement of a chain by its anchoring service's status at the
/// time the chain was checked at.
public struct TrustedListSet: Sendable {
    /// The lists, LOTLs first, each in the order given.
    public let lists: [TrustedList]

    /// The service types whose certificates anchor signers' chains: CAs (qualified or not).
    public static let signatureServiceTypes: Set<TrustServiceType> = [
        .qualifiedCertificateAuthority, .certificateAuthority,
    ]
    /// The service types whose certificates anchor time-stamping authorities' chains.
    public static let timestampServiceTypes: Set<TrustServiceType> = [.qualifiedTimestamping, .timestamping]

    /// Creates a set of lists verified elsewhere.
    public init(lists: [TrustedList]) { self.lists = lists }

    /// Loads and verifies `files`: each LOTL among them with `lotlSigners`; each TL with the
    /// certificates a loaded LOTL's pointer to its territory names, or, when no LOTL is given, with
    /// `lotlSigners` (its own signer's certificates).
    /// - Parameters:
    ///   - files: LOTL and TL files, in any order.
    ///   - lotlSigners: the LOTL's signing certificates (for a TL given alone, its signer's).
    ///   - time: the time every list must be current at (its `NextUpdate` after it).
    ///   - limits: how much each list may hold.
    /// - Throws: ``TrustedListError`` for the first list refused (`.unlisted` for a TL whose
    ///   territory the LOTL does not point to).
    public static func load(
        files: [URL],
        lotlSigners: [Certificate],
        at time: Date = Date(),
        limits: TrustedListLimits = TrustedListLimits()
    ) throws -> TrustedListSet {
        let parsed = try files.map { url in
            let name = url.lastPathComponent
            let bytes = try TrustedList.readBounded(url, limit: limits.maximumBytes, name: name)
            let xml = try TrustedList.parse(bytes, name: name, limits: limits)
            return (name: name, xml: xml, claimed: TrustedList.claimedIdentity(xml))
        }
        let lotls = try parsed.filter { $0.claimed.type == TrustedList.listOfTheListsType }.map {
            try TrustedList(parsed: $0.xml, name: $0.name, signers: lotlSigners, at: time)
        }
        let pointers = lotls.flatMap(\.pointers).filter(\.isXML)
        let tls = try parsed.filter { $0.claimed.type != TrustedList.listOfTheListsType }.map { entry in
            guard !lotls.isEmpty else {
                return try TrustedList(parsed: entry.xml, name: entry.name, signers: lotlSigners, at: time)
            }
            let signers = pointers.filter { $0.territory == entry.claimed.territory }.flatMap(\.signers)
            guard !signers.isEmpty else {
                throw TrustedListError(
                    .unlisted,
                    "\(entry.name) is the TL of \"\(entry.claimed.territory)\", to which the list of the lists "
                        + "(\(lotls.map(\.name).joined(separator: ", "))) has no pointer"
                )
            }
            return try TrustedList(parsed: entry.xml, name: entry.name, signers: signers, at: time)
        }
        return TrustedListSet(lists: lotls + tls)
    }

    /// Every service of every list.
    public var services: [TrustService] { lists.flatMap(\.services) }

    /// The certificates of the CA services granted at some time of their history: candidates for
    /// signers' chains, each chain then judged at its own time by ``judge(_:)``.
    public var signatureAnchors: [Certificate] { anchors(of: Self.signatureServiceTypes) }

    /// The certificates of the time-stamping services granted at some time of their history.
    public var timestampAnchors: [Certificate] { anchors(of: Self.timestampServiceTypes) }

    private func anchors(of types: Set<TrustServiceType>) -> [Certificate] {
        var seen = Set<[UInt8]>()
        return services.filter { types.contains($0.type) && !$0.grantedPeriods.isEmpty }.flatMap(\.certificates)
            .filter { seen.insert($0.derRepresentation).inserted }
    }

    /// The qualified time-stamping service (TSA/QTST) whose digital identity is the certificate of
    /// `tsa`, granted at `time` (the timestamp's own time), when there is one: that timestamp is
    /// then a qualified electronic time stamp.
    public func qualifiedTimestampService(for tsa: Certificate, at time: Date) -> TrustService? {
        services.first { service in
            service.type == .qualifiedTimestamping && service.status(at: time) == .granted
                && service.certificates.contains { $0.derRepresentation == tsa.derRepresentation }
        }
    }

    /// The service of one of `types` whose digital identity is `certificate`, with its list.
    public func service(
        anchoring certificate: Certificate,
        types: Set<TrustServiceType> = signatureServiceTypes
    ) -> (service: TrustService, list: TrustedList)? {
        for list in lists {
            for service in list.services where types.contains(service.type) {
                if service.certificates.contains(where: { $0.derRepresentation == certificate.derRepresentation }) {
                    return (service, list)
                }
            }
        }
        return nil
    }
}
